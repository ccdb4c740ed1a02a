// The env policy applied where callers hand lbot an environment: box exec specs, config files
// (bindings, MCP servers), `lbot mcp add`, the host starting a binding's plugin, and the error a
// runner sees when its exec tool call is refused.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { getProfile } from '../../../src/core/box/profiles.js';
import { buildSpec } from '../../../src/core/box/spec.js';
import { ConfigSchema, parseConfig } from '../../../src/core/config.js';
import { LbotError } from '../../../src/core/errors.js';
import { exitCodeFor } from '../../../src/core/exit-codes.js';
import { toApiError } from '../../../src/core/host/api-error.js';
import { createHost } from '../../../src/core/host/host.js';
import { asAsyncStores } from '../../../src/core/stores/async.js';
import type { PluginLauncher, PluginSpec } from '../../../src/core/host/ports.js';
import { openSqliteStores } from '../../../src/core/stores/sqlite/open.js';
import { systemClock } from '../../../src/runtime/clock.js';
import { buildServerRecord } from '../../../src/runtime/mcp/config.js';
import { createModelProvider } from '../../../src/runtime/models/providers.js';
import { binding, descriptor, envelope, scriptedCatalog } from './fixtures.js';
import { thrown } from '../../helpers/thrown.js';

const MARKER_IMPORT = "--import=data:text/javascript,import('node:fs').then(f=>f.writeFileSync('/tmp/pwned','x'))";

describe('box exec spec env', () => {
  const build = (env: Record<string, unknown>) => buildSpec({ session_id: 's', cmd: 'true', env }, { profile: getProfile('default') });

  it.each([
    [{ LD_PRELOAD: '/tmp/evil.so' }, ['LD_PRELOAD']],
    [{ LD_DEBUG: 'libs', LD_DEBUG_OUTPUT: '/tmp/x' }, ['LD_DEBUG', 'LD_DEBUG_OUTPUT']],
    [{ NODE_OPTIONS: MARKER_IMPORT }, ['NODE_OPTIONS']],
    [{ OK: '1', BASH_ENV: '/tmp/rc', GCONV_PATH: '/tmp/g', PYTHONPATH: '/tmp/p' }, ['BASH_ENV', 'GCONV_PATH', 'PYTHONPATH']],
  ])('refuses %j with env.denied naming every refused variable', (env, names) => {
    const e = thrown(() => build(env), LbotError);
    expect(e.code).toBe('env.denied');
    expect(exitCodeFor(e.code)).toBe(4);
    expect(e.details).toMatchObject({ variables: names, where: 'box exec env' });
  });

  it("passes ordinary names and lbot's own allowed ones through unchanged", () => {
    expect(build({ GREETING: 'hi', PYTHONUNBUFFERED: '1', NODE_ENV: 'test' }).env).toEqual({ GREETING: 'hi', PYTHONUNBUFFERED: '1', NODE_ENV: 'test' });
  });
});

describe('config files', () => {
  const withBinding = (env: Record<string, string>) => ({ bindings: [{ binding_id: 'b1', runner_id: 'plugin:acme/scripted/default', env }] });

  it('a binding whose env names LD_PRELOAD fails the load with env.denied', () => {
    const e = thrown(() => parseConfig(withBinding({ LD_PRELOAD: '/tmp/evil.so' }), '/data/lbot.config.json'), LbotError);
    expect(e.code).toBe('env.denied');
    expect(e.message).toContain('bindings.0 (b1).env');
    expect(e.details).toMatchObject({ variables: ['LD_PRELOAD'] });
  });

  it('an MCP server whose env or box.env names an interpreter variable fails the load', () => {
    const server = (extra: Record<string, unknown>) => ({ mcp: { servers: [{ name: 'evil', command: ['node', 'x.js'], ...extra }] } });
    expect(thrown(() => parseConfig(server({ env: { NODE_OPTIONS: MARKER_IMPORT } }), 'cfg'), LbotError).message).toContain('mcp.servers.0 (evil).env');
    expect(thrown(() => parseConfig(server({ in_box: true, box: { env: { PYTHONPATH: '/tmp' } } }), 'cfg'), LbotError).message).toContain(
      'mcp.servers.0 (evil).box.env',
    );
  });

  it('ordinary env names still load', () => {
    const config = parseConfig(
      { ...withBinding({ GREETING: 'hi' }), mcp: { servers: [{ name: 'ok', command: ['node', 'x.js'], env: { API_TOKEN: 't' } }] } },
      'cfg',
    );
    expect(config.bindings[0]?.env).toEqual({ GREETING: 'hi' });
  });
});

describe('lbot mcp add', () => {
  it('refuses --env NODE_OPTIONS before a record exists', () => {
    const e = thrown(
      () => buildServerRecord({ name: 'evil', command: ['node', 'x.js'], env: { NODE_OPTIONS: MARKER_IMPORT }, headers: {}, inBox: false }),
      LbotError,
    );
    expect(e.code).toBe('env.denied');
    expect(e.details).toMatchObject({ variables: ['NODE_OPTIONS'] });
  });
});

describe('the runner side of a refused exec tool call', () => {
  it('is an invalid_argument AgentAPIError that still names env.denied and the variables', () => {
    const e = thrown(() => buildSpec({ session_id: 's', cmd: 'true', env: { LD_PRELOAD: '/x.so' } }, { profile: getProfile('default') }), LbotError);
    expect(toApiError(e).toWire()).toMatchObject({
      code: 'invalid_argument',
      details: { reason: 'env_denied', error_code: 'env.denied', variables: ['LD_PRELOAD'] },
    });
  });
});

describe('host.run', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('refuses a binding env with NODE_OPTIONS before any plugin process is started', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lbot-env-host-'));
    dirs.push(dataDir);
    const started: PluginSpec[] = [];
    const launcher: PluginLauncher = {
      start(spec) {
        started.push(spec);
        return Promise.reject(new LbotError('runner.start_failed', 'the test launcher starts nothing'));
      },
    };
    const d = descriptor();
    const catalog = scriptedCatalog(d);
    const stores = openSqliteStores(dataDir);
    const host = createHost({
      stores: asAsyncStores(stores),
      launcher,
      catalog: async () => catalog,
      config: ConfigSchema.parse({}),
      models: createModelProvider([]),
      clock: systemClock,
      version: 'test',
      warn: () => undefined,
    });
    try {
      const run = host.run({ event: envelope(), binding: binding({ env: { NODE_OPTIONS: MARKER_IMPORT } }) });
      await expect(run).rejects.toMatchObject({ code: 'env.denied', details: { variables: ['NODE_OPTIONS'] } });
      expect(started).toEqual([]);
    } finally {
      await host.close();
      stores.close();
    }
  });
});
