// What a light command loads at start-up (issue 21): `--version` no zod or config, and `config get`,
// `runner list` none of the heavy libraries (model SDKs, MCP, HTTP server, logging, UI, databases). A module
// that starts importing one of them at top level shows up here, long before a benchmark would notice.
// Packages are checked on the shipped bundle (bin/lbot.js; zod, the YAML parsers, commander and a few small
// libraries are inside it, the heavy libraries stay imports of their own); lbot's own modules on tsc's
// output, one file a module, whose dynamic imports the bundle keeps as its chunks.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { createTempPlugins } from '../helpers/plugins.js';
import { startServe } from '../helpers/serve.js';

const ROOT = path.join(import.meta.dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'lbot.js');
const UNBUNDLED = path.join(ROOT, 'test', 'helpers', 'unbundled-lbot.mjs');
const HOOK = path.join(ROOT, 'test', 'helpers', 'import-log.mjs');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'lbot-imports-'));

const HEAVY = [
  'openai',
  '@anthropic-ai/sdk',
  '@modelcontextprotocol/sdk',
  'fastify',
  'pino',
  'ink',
  'react',
  'better-sqlite3',
  'pg',
  'gpt-tokenizer',
  'unpdf',
  'execa',
  'sqlite-vec',
];

/** The packages and lbot's own modules (under `dist/`) `lbot ARGS` loads, in load order, bundled or not. */
async function loaded(name: string, args: string[], bin = BIN): Promise<{ packages: Set<string>; own: string[] }> {
  const log = path.join(tmp, `${name}-${path.basename(bin)}.log`);
  const r = await execa(process.execPath, ['--import', HOOK, bin, '--data-dir', path.join(tmp, 'data'), ...args], {
    reject: false,
    env: { LBOT_IMPORT_LOG: log },
  });
  expect(r.exitCode, r.stderr).toBe(0);
  const urls = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  const packages = new Set(urls.flatMap((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1] ?? []));
  const dist = `${pathToFileURL(path.join(ROOT, 'dist')).href}/`;
  const own = urls.flatMap((u) => (u.startsWith(dist) ? [u.slice(dist.length)] : []));
  return { packages, own };
}

describe('start-up imports', () => {
  it('lbot --version loads commander and no schema, config or command module', async () => {
    const { packages, own } = await loaded('version', ['--version'], UNBUNDLED);
    expect([...packages]).toContain('commander');
    expect([...packages]).not.toContain('zod');
    expect(own.filter((m) => m.startsWith('core/stores/') || m.startsWith('core/config') || /^commands\/[^/]+\.js$/.test(m))).toEqual(['commands/index.js']);
  });

  it.each([
    ['config get', ['config', 'get', 'plugins.enabled']],
    ['runner list', ['--json', 'runner', 'list']],
  ])('lbot %s loads none of the heavy libraries', async (name, args) => {
    const { packages } = await loaded(name.replace(' ', '-'), args);
    expect(HEAVY.filter((p) => packages.has(p))).toEqual([]);
    const { packages: unbundled, own } = await loaded(name.replace(' ', '-'), args, UNBUNDLED);
    expect(HEAVY.filter((p) => unbundled.has(p))).toEqual([]);
    // Only its own command module, not the others'.
    expect(own.filter((m) => /^commands\/[^/]+\.js$/.test(m) && m !== 'commands/index.js').map((m) => m.replace(/^commands\/(.+)\.js$/, '$1'))).toEqual(
      name === 'runner list' ? ['runner', 'runner-dev'] : ['config'],
    );
  });

  it('lbot serve with no MCP server configured does not load the MCP client, even after a run', async () => {
    const log = path.join(tmp, 'serve.log');
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lbot-imports-serve-'));
    const plugins = await createTempPlugins(['echo']);
    const serve = await startServe({ dataDir, pluginsDir: plugins.pluginsDir, nodeArgs: ['--import', HOOK], env: { LBOT_IMPORT_LOG: log } });
    try {
      const event = JSON.parse(readFileSync(path.join(ROOT, 'fixtures', 'events', 'msg.json'), 'utf8')) as Record<string, unknown>;
      const r = await serve.request('POST', '/v1/runs?wait=1', { event, runner_id: 'plugin:acme/echo/default' });
      expect(r.status, r.text).toBe(200);
      expect((r.json as { status: string }).status).toBe('completed');
    } finally {
      await serve.stop('SIGTERM');
      await plugins.cleanup();
      rmSync(dataDir, { recursive: true, force: true });
    }
    const urls = readFileSync(log, 'utf8').split('\n');
    expect(urls.some((u) => u.includes('/node_modules/fastify/'))).toBe(true);
    expect(urls.filter((u) => u.includes('/node_modules/@modelcontextprotocol/sdk/'))).toEqual([]);
  });

  it('lbot run runs from the bundle alone and imports no HTTP server, UI, MCP or model SDK code', async () => {
    const { packages, own } = await loaded('run', [
      'run',
      '--event',
      path.join(ROOT, 'fixtures', 'events', 'msg.json'),
      '--plugin',
      path.join(ROOT, 'fixtures', 'runners', 'echo'),
    ]);
    // sqlite-vec loads on a store's first vector search (core/stores/sqlite/vector-functions.ts).
    expect(
      ['fastify', 'pino', 'ink', 'react', '@modelcontextprotocol/sdk', 'openai', '@anthropic-ai/sdk', 'sqlite-vec'].filter((p) => packages.has(p)),
    ).toEqual([]);
    expect(own[0]).toBe('bundle/cli-loader.js');
    expect(
      own.every((m) => m.startsWith('bundle/')),
      own.join(' '),
    ).toBe(true);
  });
});
