// What the dev watcher ignores: dependencies, VCS, data dirs, editor temp files, and build output the
// plugin does not execute from.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ignoreRule } from '../../../src/runtime/dev/watcher.js';

const root = path.resolve('/work/plugins');
const p = (...parts: string[]) => path.join(root, ...parts);

const rule = ignoreRule({
  root,
  extraIgnored: [p('hot', 'data')],
  pluginDirOf: (abs) => {
    const first = path.relative(root, abs).split(path.sep)[0];
    return first && !first.startsWith('..') ? path.join(root, first) : null;
  },
  executedDir: (dir) => (dir === p('ts') ? 'dist' : null),
});

describe('watcher ignore rule', () => {
  it('watches code and YAML of every plugin', () => {
    for (const f of [
      root,
      p('hot'),
      p('hot', 'main.js'),
      p('hot', 'manifest.yaml'),
      p('hot', 'components', 'agent_runner', 'default.yaml'),
      p('ts', 'src', 'main.ts'),
    ]) {
      expect(rule(f), f).toBe(false);
    }
  });

  it("watches a LangBot plugin's Python and YAML, not its virtualenv or bytecode caches", () => {
    for (const f of [p('lb', 'main.py'), p('lb', 'components', 'agent_runner', 'default.py'), p('lb', 'manifest.yaml')]) expect(rule(f), f).toBe(false);
    for (const f of [
      p('lb', '.venv', 'lib', 'python3.11', 'site-packages', 'x.py'),
      p('lb', 'venv', 'bin', 'python'),
      p('lb', 'components', '__pycache__', 'default.cpython-311.pyc'),
      p('lb', '.pytest_cache', 'v', 'x'),
    ])
      expect(rule(f), f).toBe(true);
  });

  it('ignores node_modules, .git, .lbot, the data dir and editor temp files', () => {
    for (const f of [
      p('hot', 'node_modules', 'x', 'index.js'),
      p('hot', '.git', 'HEAD'),
      p('.lbot', 'lbot.db'),
      p('hot', 'data', 'lbot.db'),
      p('hot', 'main.js~'),
      p('hot', '.main.js.swp'),
      p('hot', 'tsconfig.tsbuildinfo'),
    ]) {
      expect(rule(f), f).toBe(true);
    }
  });

  it('ignores build output unless the plugin executes from it', () => {
    expect(rule(p('hot', 'dist', 'main.js'))).toBe(true);
    expect(rule(p('hot', 'build'))).toBe(true);
    expect(rule(p('ts', 'dist', 'main.js'))).toBe(false);
    expect(rule(p('ts', 'build', 'x.js'))).toBe(true);
  });
});

describe('watcher ignore rule with the plugins dir inside the data dir', () => {
  const data = path.resolve('/work/data');
  const d = (...parts: string[]) => path.join(data, ...parts);
  const pluginDirOf = (r: string) => (abs: string) => {
    const first = path.relative(r, abs).split(path.sep)[0];
    return first && !first.startsWith('..') ? path.join(r, first) : null;
  };
  it('watches <data-dir>/plugins and ignores the data files beside it', () => {
    for (const r of [d('plugins'), data]) {
      const inData = ignoreRule({ root: r, extraIgnored: [data], extraKept: [d('plugins')], pluginDirOf: pluginDirOf(r), executedDir: () => null });
      for (const f of [r, d('plugins'), d('plugins', 'hot'), d('plugins', 'hot', 'main.js'), d('plugins', 'hot', 'manifest.yaml')])
        expect(inData(f), `${r}: ${f}`).toBe(false);
      for (const f of [d('lbot.db'), d('lbot.db-wal'), d('artifacts', 'a1'), d('box', 's1', 'x'), d('skills', 'k', 'SKILL.md'), d('logs', 'serve.log')])
        expect(inData(f), `${r}: ${f}`).toBe(true);
    }
  });
});
