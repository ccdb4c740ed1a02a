// Type-aware lint gate, run by `npm test` (script `lint`) so CI fails on it.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'fixtures/**', 'templates/**', 'bench/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // Ports and stores are objects of closures that never use `this`; passing their members is safe.
      '@typescript-eslint/unbound-method': 'off',
      // Async methods that implement a Promise-returning interface need no await of their own.
      '@typescript-eslint/require-await': 'off',
      // The MCP SDK's numeric ErrorCode enum is compared with the numeric code of the errors it raises.
      '@typescript-eslint/no-unsafe-enum-comparison': 'off',
      // Rejecting with a caught `unknown` passes the original error on unchanged.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // A variable a closure reads before its one later assignment cannot be const.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ['runners/**/*.ts'],
    rules: {
      // A plugin process that imports the zod package beside the SDK loads zod twice (docs/writing-a-runner.md).
      'no-restricted-imports': ['error', { paths: [{ name: 'zod', message: "use `import { z } from 'lbot/sdk'`, the SDK's own zod" }] }],
    },
  },
);
