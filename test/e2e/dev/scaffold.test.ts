// `lbot runner init|scaffold`: the files it writes, its own `npm test` offline, a build that reproduces
// the shipped dist/ from src/, and the refusals of bad input.
import { existsSync, lstatSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { parse as parseYaml } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../helpers/plugins.js';
import { LBOT_BIN } from '../../helpers/serve.js';
import { withReason } from '../../helpers/skip.js';

let cwd: string;
beforeEach(async () => {
  cwd = await mkdtemp(path.join(os.tmpdir(), 'lbot-scaffold-'));
});
afterEach(async () => {
  await rm(cwd, { recursive: true, force: true });
});

const lbot = (args: string[]) => execa(process.execPath, [LBOT_BIN, ...args], { reject: false, cwd, env: { LBOT_HOME: undefined } });
const offline = { npm_config_offline: 'true', npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };

describe('lbot runner init', () => {
  it('writes the LangBot layout with the SDK import, a test, a README and a prebuilt dist', async () => {
    const r = await lbot(['--json', 'runner', 'init', 'hello-bot', '--author', 'acme', '--label', 'Hello: "bot"']);
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { runner_id: string; files: string[]; linked: string[] };
    expect(out.runner_id).toBe('plugin:acme/hello-bot/default');
    const dir = path.join(cwd, 'hello-bot');
    for (const f of [
      'manifest.yaml',
      'components/agent_runner/default.yaml',
      'src/main.ts',
      'src/main.test.ts',
      'dist/main.js',
      'dist/main.test.js',
      'package.json',
      'tsconfig.json',
      'README.md',
      '.gitignore',
    ]) {
      expect(existsSync(path.join(dir, f)), f).toBe(true);
    }
    const manifest = parseYaml(await readFile(path.join(dir, 'manifest.yaml'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({
      kind: 'Plugin',
      metadata: { author: 'acme', name: 'hello-bot', label: { en_US: 'Hello: "bot"' } },
      execution: { node: { path: 'dist/main.js' } },
    });
    const component = parseYaml(await readFile(path.join(dir, 'components/agent_runner/default.yaml'), 'utf8')) as Record<string, unknown>;
    expect(component).toMatchObject({ kind: 'AgentRunner', metadata: { name: 'default', label: { en_US: 'Hello: "bot"' } } });
    expect(await readFile(path.join(dir, 'src/main.ts'), 'utf8')).toContain("from 'lbot/sdk'");
    expect(await readFile(path.join(dir, 'src/main.test.ts'), 'utf8')).toContain('runInProcess');
    const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as {
      name: string;
      devDependencies: Record<string, string>;
      scripts: Record<string, string>;
    };
    expect(pkg.name).toBe('hello-bot');
    expect(pkg.devDependencies.lbot).toBe(`file:${REPO_ROOT.replace(/\/+$/, '')}`);
    expect(pkg.scripts.test).toBe('node --test dist/');
    expect(await readFile(path.join(dir, 'README.md'), 'utf8')).toContain('plugin:acme/hello-bot/default');
    expect(lstatSync(path.join(dir, 'node_modules', 'lbot')).isSymbolicLink()).toBe(true);
    expect(out.linked).toContain('node_modules/lbot');
    const list = await execa(process.execPath, [LBOT_BIN, '--json', 'runner', 'list', '--plugin', dir], { reject: false, cwd });
    expect(JSON.parse(list.stdout)).toMatchObject([{ id: 'plugin:acme/hello-bot/default', label: { en_US: 'Hello: "bot"' } }]);
  });

  it('its own npm test passes offline, and lbot run answers with the scaffolded runner', async () => {
    expect((await lbot(['runner', 'scaffold', 'my-runner', '--author', 'acme'])).exitCode).toBe(0);
    const dir = path.join(cwd, 'my-runner');
    const test = await execa('npm', ['test'], { cwd: dir, reject: false, env: offline });
    expect(test.exitCode, test.stdout + test.stderr).toBe(0);
    expect(test.stdout).toMatch(/# pass 3/);
    const event = path.join(REPO_ROOT, 'fixtures', 'events', 'msg.json');
    const run = await execa(process.execPath, [LBOT_BIN, '--data-dir', path.join(cwd, 'data'), 'run', '--event', event, '--plugin', dir], {
      reject: false,
      cwd,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('You said: ping');
  });

  it('npm run build reproduces the shipped dist/ from src/ (template in sync)', async () => {
    expect((await lbot(['runner', 'scaffold', 'my-runner', '--author', 'acme'])).exitCode).toBe(0);
    const dir = path.join(cwd, 'my-runner');
    const shipped = await Promise.all(['main.js', 'main.test.js'].map((f) => readFile(path.join(dir, 'dist', f), 'utf8')));
    await rm(path.join(dir, 'dist'), { recursive: true });
    const build = await execa('npm', ['run', 'build'], { cwd: dir, reject: false, env: offline });
    expect(build.exitCode, build.stdout + build.stderr).toBe(0);
    const built = await Promise.all(['main.js', 'main.test.js'].map((f) => readFile(path.join(dir, 'dist', f), 'utf8')));
    expect(built).toEqual(shipped);
  });

  it('next steps say npx lbot when no lbot is on PATH, and lbot when one is', async () => {
    const nodeOnly = path.dirname(process.execPath);
    const run = (dir: string, PATH: string) =>
      execa(process.execPath, [LBOT_BIN, 'runner', 'init', dir, '--yes', '--no-link'], { reject: false, cwd, env: { LBOT_HOME: undefined, PATH } });
    const without = await run('a-bot', nodeOnly);
    expect(without.exitCode, without.stderr).toBe(0);
    expect(without.stdout).toContain('  npx lbot runner test .');
    expect(without.stdout).toContain('  npx lbot dev .');
    const bin = path.join(cwd, 'bin');
    await mkdir(bin);
    await writeFile(path.join(bin, 'lbot'), '#!/bin/sh\n', { mode: 0o755 });
    const withLbot = await run('b-bot', `${bin}:${nodeOnly}`);
    expect(withLbot.exitCode, withLbot.stderr).toBe(0);
    expect(withLbot.stdout).toContain('  lbot runner test .');
    expect(withLbot.stdout).not.toContain('npx');
  });

  it('--yes takes defaults, --no-link leaves node_modules alone', async () => {
    const r = await lbot(['runner', 'init', 'Some Bot', '--yes', '--no-link']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('plugin:local/some-bot/default');
    expect(existsSync(path.join(cwd, 'Some Bot', 'node_modules'))).toBe(false);
  });

  it('refuses a non-empty directory, bad id segments, and a missing author off a TTY', async () => {
    await mkdir(path.join(cwd, 'taken'));
    await writeFile(path.join(cwd, 'taken', 'x.txt'), 'x');
    const taken = await lbot(['runner', 'init', 'taken', '--author', 'acme']);
    expect(taken.exitCode).toBe(2);
    expect(taken.stderr).toContain('already exists and is not empty');
    expect(await readdir(path.join(cwd, 'taken'))).toEqual(['x.txt']);
    const bad = await lbot(['runner', 'init', 'ok', '--author', 'a b']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('--author "a b" cannot be part of a runner id');
    const none = await lbot(['runner', 'init', 'ok']);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('--author is required');
    expect(existsSync(path.join(cwd, 'ok'))).toBe(false);
  });
});

const noPython = (await execa('python3', ['--version'], { reject: false })).exitCode === 0 ? null : 'python3 is missing';

describe('lbot runner init --langbot', () => {
  it('writes a LangBot-SDK plugin (manifest, plugin class, runner component, requirements) that lbot discovers and reads', async () => {
    const r = await lbot(['--json', 'runner', 'init', 'hello-lb', '--author', 'acme', '--label', 'Hello: "lb"', '--langbot']);
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { runner_id: string; files: string[]; linked: string[] };
    expect(out.runner_id).toBe('plugin:acme/hello-lb/default');
    expect(out.linked).toEqual([]);
    expect([...out.files].sort()).toEqual(
      [
        '.gitignore',
        'README.md',
        'components/agent_runner/default.py',
        'components/agent_runner/default.yaml',
        'main.py',
        'manifest.yaml',
        'requirements.txt',
      ].sort(),
    );
    const dir = path.join(cwd, 'hello-lb');
    expect(existsSync(path.join(dir, 'node_modules'))).toBe(false);
    const manifest = parseYaml(await readFile(path.join(dir, 'manifest.yaml'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({
      kind: 'Plugin',
      metadata: { author: 'acme', name: 'hello-lb' },
      execution: { python: { path: 'main.py', attr: 'HelloLbPlugin' } },
    });
    const component = parseYaml(await readFile(path.join(dir, 'components/agent_runner/default.yaml'), 'utf8')) as Record<string, unknown>;
    expect(component).toMatchObject({ kind: 'AgentRunner', execution: { python: { path: './default.py', attr: 'HelloLbRunner' } } });
    expect(await readFile(path.join(dir, 'main.py'), 'utf8')).toContain('class HelloLbPlugin(BasePlugin):');
    expect(await readFile(path.join(dir, 'components/agent_runner/default.py'), 'utf8')).toContain('class HelloLbRunner(AgentRunner):');
    expect(await readFile(path.join(dir, 'requirements.txt'), 'utf8')).toMatch(/^langbot-plugin>=0\.5\.0,<1\.0\.0$/m);

    const show = await lbot(['--json', '--plugins', cwd, 'runner', 'show', 'plugin:acme/hello-lb/default']);
    expect(show.exitCode, show.stderr).toBe(0);
    // Nothing lbot does not understand: no warning, no `unrecognized`.
    expect(show.stderr).toBe('');
    const shown = JSON.parse(show.stdout) as Record<string, unknown>;
    expect(shown).toMatchObject({
      id: 'plugin:acme/hello-lb/default',
      label: { en_US: 'Hello: "lb"' },
      plugin_version: '0.1.0',
      compatible: true,
      capabilities: { streaming: true, tool_calling: false },
      plugin_dir: dir,
    });
    expect(shown.unrecognized).toBeUndefined();
    const list = await lbot(['--json', 'runner', 'list', '--plugin', 'hello-lb']);
    expect(list.exitCode, list.stderr).toBe(0);
    expect(list.stdout).toContain('"id":"plugin:acme/hello-lb/default"');
  });

  it.skipIf(noPython !== null)(withReason('the scaffold Python files parse (ast, nothing is run or cached)', noPython), async () => {
    expect((await lbot(['runner', 'init', 'py-lb', '--author', 'acme', '--langbot'])).exitCode).toBe(0);
    const check = 'import ast, sys\nfor f in sys.argv[1:]: ast.parse(open(f, encoding="utf-8").read(), f)';
    const r = await execa('python3', ['-I', '-c', check, 'main.py', 'components/agent_runner/default.py'], { cwd: path.join(cwd, 'py-lb'), reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
  });
});
