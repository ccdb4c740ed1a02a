// Opt-in: a runner written against the real `langbot-plugin` SDK (fixtures/runners/langbot-sdk-echo)
// through the built CLI. It runs only when LBOT_LANGBOT_PYTHON names a Python that can import the SDK
// (there is no SDK in CI); otherwise vitest reports it as skipped with the reason.
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { withReason } from '../../helpers/skip.js';
import { completedTexts, parseLines, scenario, summaries } from './harness.js';

const RUNNER = 'plugin:lbot-fixtures/sdk-echo/default';
const PYTHON = process.env.LBOT_LANGBOT_PYTHON;

/** Why the real SDK cannot be used here, or null when it can. */
async function sdkMissing(): Promise<string | null> {
  if (!PYTHON) return 'LBOT_LANGBOT_PYTHON is not set (point it at a Python with `pip install langbot-plugin`)';
  // -I and cwd / so a stand-in package next to the test cannot pass for the SDK.
  const r = await execa(PYTHON, ['-I', '-c', 'import langbot_plugin'], { reject: false, cwd: '/' });
  if (r.exitCode !== 0) return `${PYTHON} cannot import langbot_plugin`;
  return null;
}

const missing = await sdkMissing();

describe('the real langbot-plugin SDK', () => {
  it.skipIf(missing !== null)(withReason('an SDK echo runner streams through lbot run, chunked both ways', missing), async () => {
    const s = await scenario(['langbot-sdk-echo']);
    const shown = await s.json(['runner', 'show', RUNNER]);
    expect(shown).toMatchObject({ id: RUNNER, unrecognized: { capabilities: { skill_authoring: false } } });
    const text = `héllo ${'大🙂'.repeat(5000)}`;
    const event = await s.writeJson('ev.json', {
      event_id: 'ev-sdk',
      event_type: 'message.received',
      source: 'pipeline_adapter',
      event_time: 1767225600.5,
      conversation_id: 'c1',
      actor: { actor_type: 'user', actor_id: 'u1' },
      input: { text, contents: [{ type: 'text', text }], attachments: [] },
      delivery: { surface: 'cli', supports_streaming: true },
    });
    const r = await s.run([], { json: true, runner: RUNNER, event, env: { LBOT_LANGBOT_PYTHON: PYTHON } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(completedTexts(r.stdout)).toEqual([`echo: ${text}`]);
    const deltas = parseLines(r.stdout).filter((l) => l.type === 'message.delta');
    expect(deltas.length).toBeGreaterThanOrEqual(1);
    expect(summaries(r.stdout)[0]).toMatchObject({ runner_id: RUNNER, status: 'completed' });
  });

  it.skipIf(missing !== null)(withReason('a fresh `lbot runner init --langbot` scaffold runs on the SDK unchanged', missing), async () => {
    const s = await scenario([]);
    const init = await s.lbot(['--json', 'runner', 'init', path.join(s.plugins.pluginsDir, 'fresh-lb'), '--author', 'acme', '--langbot'], { globals: false });
    expect(init.exitCode, init.stderr).toBe(0);
    const r = await s.run([], { json: true, runner: 'plugin:acme/fresh-lb/default', event: 'msg.json', env: { LBOT_LANGBOT_PYTHON: PYTHON } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(completedTexts(r.stdout)).toEqual(['echo: ping']);
  });
});
