// The LangBot SDK launcher with real processes: the register window, the SDK probe (missing, wrong
// version, no interpreter), and no process group left behind.
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/core/host/api-error.js';
import type { PluginSpec, ProxyCallHandler } from '../../../src/core/host/ports.js';
import { createPluginLauncher } from '../../../src/runtime/plugins/launcher.js';
import { sdkVersionSupported } from '../../../src/runtime/plugins/langbot-launcher.js';
import { liveProcessGroups } from '../../../src/runtime/process/group.js';
import { createTempPlugins, type TempPlugins } from '../../helpers/plugins.js';
import { withReason } from '../../helpers/skip.js';

const hasPython = (await execa('python3', ['--version'], { reject: false })).exitCode === 0;
let plugins: TempPlugins;
beforeAll(async () => {
  plugins = await createTempPlugins([]);
});
afterAll(async () => {
  await plugins.cleanup();
});
afterEach(async () => {
  await expect.poll(() => liveProcessGroups(), { timeout: 10_000 }).toEqual([]);
});

const noApi: ProxyCallHandler = async (call) => {
  throw new ApiError('unauthorized', `no API in this test (${call.method})`, 'permission_denied');
};

let n = 0;
async function copy(edit?: (dir: string) => Promise<void>): Promise<PluginSpec> {
  const dir = await plugins.add('langbot-wire', `wire-${++n}`);
  await edit?.(dir);
  return { identity: 'lbot-fixtures/wire-agent', dir, execution: { python: { path: 'main.py', attr: 'WireAgentPlugin' } }, env: {} };
}

const launcher = (env: NodeJS.ProcessEnv = process.env, initializeTimeoutMs = 1500) =>
  createPluginLauncher({ initializeTimeoutMs, graceMs: 300, hostEnv: env });

describe('sdkVersionSupported', () => {
  it('accepts 0.5.x to 0.x and refuses older and 1.x', () => {
    expect(['0.5.3', '0.7.1', '0.9.0rc1'].map(sdkVersionSupported)).toEqual([true, true, true]);
    expect(['0.4.9', '1.0.0', 'dev'].map(sdkVersionSupported)).toEqual([false, false, false]);
  });
});

describe.skipIf(!hasPython)(withReason('LangBot launcher', !hasPython && 'python3 is missing'), () => {
  it('a plugin that never registers fails the start window with runner.start_failed, and its group is gone', async () => {
    const spec = await copy((dir) => writeFile(path.join(dir, 'wire_mode'), 'no-register'));
    await expect(launcher().start(spec, noApi)).rejects.toMatchObject({
      code: 'runner.start_failed',
      message: expect.stringMatching(/did not send register_plugin within 1500 ms .*langbot_plugin\.cli\.__init__ run -s --prod/),
    });
  });

  it('a Python without the SDK is refused before anything runs, with the fix in the hint', async () => {
    const spec = await copy((dir) => rm(path.join(dir, 'langbot_plugin'), { recursive: true }));
    await expect(launcher().start(spec, noApi)).rejects.toMatchObject({
      code: 'runner.start_failed',
      message: expect.stringMatching(/cannot import langbot_plugin/),
    });
  });

  it('an SDK outside the supported range is refused with both versions named', async () => {
    const spec = await copy(async (dir) => {
      const meta = path.join(dir, 'langbot_plugin-0.5.3.dist-info', 'METADATA');
      await writeFile(meta, (await readFile(meta, 'utf8')).replace('Version: 0.5.3', 'Version: 1.2.0'));
    });
    await expect(launcher().start(spec, noApi)).rejects.toMatchObject({
      code: 'runner.start_failed',
      message: expect.stringMatching(/langbot-plugin 1\.2\.0; lbot speaks .*0\.5\.0/),
    });
  });

  it('LBOT_LANGBOT_PYTHON naming no interpreter is runner.start_failed', async () => {
    const spec = await copy();
    await expect(launcher({ ...process.env, LBOT_LANGBOT_PYTHON: '/nonexistent/python3' }).start(spec, noApi)).rejects.toMatchObject({
      code: 'runner.start_failed',
      message: expect.stringMatching(/could not run the Python for LangBot plugins \(\/nonexistent\/python3\)/),
    });
  });

  it('completes the handshake and closes on stdin EOF without leftovers', async () => {
    const conn = await launcher(process.env, 20_000).start(await copy(), noApi);
    expect(conn.pgid).not.toBeNull();
    await conn.close();
    expect(await conn.exited).toBeNull();
  });
});
