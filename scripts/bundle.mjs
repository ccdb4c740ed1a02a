// Bundles lbot's process entry points into dist/bundle/ (same paths as under src/): the CLI, the SDK with
// its plugin bootstraps, and the box helpers. lbot's own modules and the dependencies every command line
// loads (zod, the two YAML parsers, commander, and the small croner, leven and lowdb: an import of a package
// of its own costs 2–4 ms of resolving and loading) become a few files, so start-up stops paying for
// resolving and compiling hundreds of modules. Every other dependency stays a plain import from node_modules: native addons, and
// the heavy ones only some commands need (fastify, ink, the model and MCP SDKs, pg …). Dynamic imports stay
// lazy: each becomes its own chunk, and code the entries share is one chunk, loaded once per process.
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

// Two groups, bundled apart: a process loads one of them, never both. The plugin side (the SDK and its
// bootstraps) then shares no chunk with the CLI, so a plugin process resolves and loads a few files, not the
// many small chunks the CLI's lazy commands split the shared code into.
const GROUPS = [
  ['cli', 'runtime/box/supervisor', 'runtime/box/quota-watcher'],
  ['sdk/index', 'sdk/plugin-main', 'sdk/resolve-lbot', 'runtime/dev/lazy-bootstrap'],
];
const BUNDLED = new Set(['zod', 'yaml', 'commander', 'js-yaml', 'croner', 'leven', 'lowdb']);
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const external = Object.keys(pkg.dependencies)
  .filter((name) => !BUNDLED.has(name))
  .flatMap((name) => [name, `${name}/*`]);

// zod's namespace re-exports all of its ~40 locales (366 kB, half of the zod chunk), which every lbot process
// would parse at start. lbot speaks English, the locale zod installs by default: `z.locales` holds just `en`.
const englishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, ({ importer, resolveDir }) => {
      if (!importer.includes(`${path.sep}zod${path.sep}`)) return undefined;
      const locales = path.join(resolveDir, '../locales');
      return { path: path.join(locales, 'en-only'), namespace: 'zod-locales', pluginData: locales };
    });
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, ({ pluginData }) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: pluginData,
    }));
  },
};

// zod compiles a parser for each object schema with `new Function` on its first parse. That pays for schemas
// parsed many times (a runner's proxy calls, serve's requests) and is pure cost for the hundreds parsed once or
// twice while a process starts. The compile now waits until a schema's own parse count passes HOT_PARSES;
// until then the schema parses on zod's interpreted path, which gives the same result. The edit is checked
// against zod's source text, so a zod release that moves it fails the build instead of losing the change.
const HOT_PARSES = 8;
const FASTPASS_EDITS = [
  ['    let fastpass;\n', '    let fastpass;\n    let parses = 0;\n'],
  [
    'if (jit && fastEnabled && ctx?.async === false && ctx.jitless !== true) {',
    `if (jit && fastEnabled && ctx?.async === false && ctx.jitless !== true && (fastpass !== undefined || ++parses > ${HOT_PARSES})) {`,
  ],
];
const zodLazyFastpass = {
  name: 'zod-lazy-fastpass',
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]core[\\/]schemas\.js$/ }, ({ path: file }) => {
      let contents = readFileSync(file, 'utf8');
      for (const [from, to] of FASTPASS_EDITS) {
        if (contents.split(from).length !== 2) throw new Error(`zod-lazy-fastpass: ${file} no longer has exactly one ${JSON.stringify(from)}`);
        contents = contents.replace(from, to);
      }
      return { contents, loader: 'js' };
    });
  },
};

// Chunk names carry a content hash: a rebuild starts from an empty directory so no stale chunk is left.
rmSync('dist/bundle', { recursive: true, force: true });
for (const entries of GROUPS) {
  await build({
    entryPoints: entries.map((entry) => `src/${entry}.ts`),
    outbase: 'src',
    outdir: 'dist/bundle',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.12',
    external,
    // commander is CommonJS: its require() of node built-ins needs a real require in an ES module.
    banner: { js: "import { createRequire as __lbotRequire } from 'node:module'; const require = __lbotRequire(import.meta.url);" },
    plugins: [englishOnly, zodLazyFastpass],
    legalComments: 'none',
    logLevel: 'warning',
  });
}
