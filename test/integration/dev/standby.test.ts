// The dev launcher with real processes: a reload takes the standby process, which loads the module as it
// is at that moment; broken code fails the start like a cold start; close stops the standby.
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PluginConnection } from '../../../src/core/host/ports.js';
import { createPluginLauncher } from '../../../src/runtime/plugins/launcher.js';
import { LAZY_BOOTSTRAP, StandbyLauncher } from '../../../src/runtime/dev/standby.js';
import { createTempPlugins, groupGone, waitGroupGone, type TempPlugins } from '../../helpers/plugins.js';
import { withReason } from '../../helpers/skip.js';

const HAS_PYTHON = spawnSync('python3', ['--version']).status === 0;

const hot = (reply: string) =>
  `import { completed, definePlugin, defineRunner, message } from 'lbot/sdk';\nexport default definePlugin({ runners: { default: defineRunner({ async *run() { yield message(${JSON.stringify(reply)}); yield completed(); } }) } });\n`;

let plugins: TempPlugins | undefined;
const opened: PluginConnection[] = [];
const spawned: number[] = [];

afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((c) => c.close()));
  for (const pgid of spawned.splice(0)) expect(await waitGroupGone(pgid)).toBe(true);
  await plugins?.cleanup();
});

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function replyOf(conn: PluginConnection): Promise<unknown> {
  const results: unknown[] = [];
  const { createTestContext } = await import('../../../src/sdk/testing.js');
  const ctx = createTestContext();
  await conn.run({ run_id: ctx.run_id, runner_name: 'default', context: ctx }, (r) => results.push(r));
  const first = results[0] as { data?: { message?: { content?: unknown } } } | undefined;
  return first?.data?.message?.content;
}

describe('StandbyLauncher', () => {
  it('serves the next start from a standby process that loads the edited module', async () => {
    plugins = await createTempPlugins(['echo']);
    const dir = plugins.dir('echo');
    await writeFile(path.join(dir, 'main.js'), hot('v1'));
    const launcher = new StandbyLauncher(createPluginLauncher({ bootstrapPath: LAZY_BOOTSTRAP, onSpawn: (c) => c.pgid !== null && spawned.push(c.pgid) }));
    const spec = { identity: 'acme/echo', dir, execution: { node: { path: 'main.js' } }, env: {} };
    const first = await launcher.start(spec, async () => null);
    opened.push(first);
    expect(launcher.lastStart?.standby).toBe(false);
    expect(await replyOf(first)).toBe('v1');
    await until(() => launcher.standbyCount() === 1, 'a standby');

    await writeFile(path.join(dir, 'main.js'), hot('v2'));
    const second = await launcher.start(spec, async () => null);
    opened.push(second);
    expect(launcher.lastStart?.standby).toBe(true);
    expect(await replyOf(second)).toBe('v2');
    expect(await replyOf(first)).toBe('v1');

    await until(() => launcher.standbyCount() === 1, 'the next standby');
    await writeFile(path.join(dir, 'main.js'), 'export default {{ broken');
    await expect(launcher.start(spec, async () => null)).rejects.toMatchObject({
      code: 'runner.start_failed',
      message: expect.stringContaining('SyntaxError'),
    });
    await until(() => launcher.standbyCount() === 1, 'a standby after the failure');
    const standbyGroups = [...spawned];
    await launcher.close();
    expect(launcher.standbyCount()).toBe(0);
    expect(groupGone(standbyGroups.at(-1) ?? -1) || (await waitGroupGone(standbyGroups.at(-1) ?? -1))).toBe(true);
  });

  it.skipIf(!HAS_PYTHON)(
    withReason(
      'starts command plugins directly, without a standby',
      !HAS_PYTHON && 'python3 is missing, and the command plugin fixture (python-echo) runs on it',
    ),
    async () => {
      plugins = await createTempPlugins(['python-echo']);
      const launcher = new StandbyLauncher(createPluginLauncher({ bootstrapPath: LAZY_BOOTSTRAP, onSpawn: (c) => c.pgid !== null && spawned.push(c.pgid) }));
      const spec = { identity: 'acme/python-echo', dir: plugins.dir('python-echo'), execution: { command: ['python3', 'main.py'] }, env: {} };
      const conn = await launcher.start(spec, async () => null);
      opened.push(conn);
      // The direct path records no standby start and schedules no standby.
      expect(launcher.lastStart).toBeNull();
      expect(launcher.standbyCount()).toBe(0);
      await launcher.close();
    },
  );
});
