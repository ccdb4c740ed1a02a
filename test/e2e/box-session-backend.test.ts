// The backend is part of a box session's identity: a session made with `--backend host` is never reused by
// a request that did not name host — not by `lbot box exec`, not by managed processes, not by the native
// exec tool's default conversation session. Real bwrap sandboxes, the built CLI.
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { bwrapSkipReason } from '../integration/box/helpers.js';
import { boxBackend } from '../helpers/box.js';
import { api, done, pick, reports, scenario as hostScenario, SCRIPTED } from './host/harness.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(REPO, 'bin', 'lbot.js');
if (!existsSync(path.join(REPO, 'dist', 'cli.js'))) throw new Error('dist/ is missing: run `npm run build` before the e2e tests');

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

type Cli = { exitCode: number; stdout: string; stderr: string };

function scenario() {
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'lbot-box-backend-')));
  roots.push(root);
  const dataDir = path.join(root, 'data');
  mkdirSync(dataDir);
  writeFileSync(path.join(dataDir, 'lbot.config.json'), JSON.stringify({ box: { workspace_quota_mb: 0 } }));
  const lbot = async (args: string[]): Promise<Cli> => {
    const env: Record<string, string> = {};
    for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k] !== undefined) env[k] = process.env[k] ?? '';
    const r = await execa(process.execPath, [BIN, '--data-dir', dataDir, ...args], { reject: false, env, extendEnv: false, cwd: root, timeout: 60_000 });
    return { exitCode: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr };
  };
  return { root, dataDir, lbot };
}

/** A command that leaves a file at a host path: it can only appear when the command ran on the host. */
const onHostProbe = (marker: string) => `touch ${marker} 2>/dev/null; cat /proc/1/comm`;

describe.skipIf(bwrapSkipReason !== null)(`box sessions keep their backend${bwrapSkipReason ? ` (skipped: ${bwrapSkipReason})` : ''}`, () => {
  it('refuses to run a default-backend exec in a host-backend session (box.session_conflict), never on the host', async () => {
    const s = scenario();
    const made = await s.lbot(['box', 'exec', '--session', 's1', '--backend', 'host', '--', 'true']);
    expect(made.exitCode, made.stderr).toBe(0);
    const marker = path.join(s.root, 'ran-on-host');
    const r = await s.lbot(['--json', 'box', 'exec', '--session', 's1', '--', 'sh', '-c', onHostProbe(marker)]);
    expect(existsSync(marker)).toBe(false);
    expect(r.exitCode).toBe(125);
    const v = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? 'null') as {
      ok: boolean;
      error: { code: string; message: string; details: Record<string, unknown> };
    };
    expect(v.error).toMatchObject({ code: 'box.session_conflict', details: { session_id: 's1', field: 'backend', stored: 'host', requested: 'auto' } });
    expect(v.error.message).toContain('host backend');
    expect(r.stderr).toContain('error[box.session_conflict]');
    // The host session is left alone and still answers a request that names host.
    const again = await s.lbot(['box', 'exec', '--session', 's1', '--backend', 'host', '--', 'true']);
    expect(again.exitCode, again.stderr).toBe(0);
    // Naming another backend is a conflict too.
    expect((await s.lbot(['box', 'exec', '--session', 's1', '--backend', 'bwrap', '--', 'sh', '-c', onHostProbe(marker)])).exitCode).toBe(125);
    expect(existsSync(marker)).toBe(false);
    await s.lbot(['box', 'rm', 's1']);
  });

  it('refuses to start a managed process of a default-backend request in a host-backend session (exit 8)', async () => {
    const s = scenario();
    expect((await s.lbot(['box', 'exec', '--session', 'p1', '--backend', 'host', '--', 'true'])).exitCode).toBe(0);
    const marker = path.join(s.root, 'process-ran-on-host');
    const r = await s.lbot(['box', 'process', 'start', '--session', 'p1', '--id', 'srv', '--', 'sh', '-c', onHostProbe(marker)]);
    expect(r.exitCode).toBe(8);
    expect(r.stderr).toContain('error[box.session_conflict]');
    await new Promise((res) => setTimeout(res, 300));
    expect(existsSync(marker)).toBe(false);
    await s.lbot(['box', 'rm', 'p1']);
  });

  it('a sandboxed session is not reused by a request that names host', async () => {
    const s = scenario();
    expect((await s.lbot(['box', 'exec', '--session', 'b1', '--', 'true'])).exitCode).toBe(0);
    const r = await s.lbot(['box', 'exec', '--session', 'b1', '--backend', 'host', '--', 'true']);
    expect(r.exitCode).toBe(125);
    expect(r.stderr).toContain('error[box.session_conflict]');
    await s.lbot(['box', 'rm', 'b1']);
  });
});

const box = boxBackend();
describe.skipIf(!box.usable || bwrapSkipReason !== null)(
  `the native exec tool keeps its conversation session sandboxed${box.usable ? '' : ` (skipped: ${box.reason})`}`,
  () => {
    it("does not run the model's command in a host-backend session with the conversation's id", async () => {
      const s = await hostScenario();
      // Someone made the conversation's default session (conversation_c1) on the host backend.
      const made = await s.lbot(['box', 'exec', '--session', 'conversation_c1', '--backend', 'host', '--', 'true']);
      expect(made.exitCode, made.stderr).toBe(0);
      const marker = path.join(s.root, 'tool-ran-on-host');
      const binding = await s.writeJson('binding-exec.json', { binding_id: 'b1', runner_id: SCRIPTED, resource_policy: { allowed_tool_names: ['exec'] } });
      const run = await s.run([api('tools.call', { tool_name: 'exec', parameters: { command: onHostProbe(marker) } }), done()], {
        json: true,
        args: ['--binding', binding],
      });
      expect(existsSync(marker)).toBe(false);
      const [call] = reports(run.stdout);
      expect(call, run.stdout + run.stderr).toMatchObject({ ok: false });
      // The refusal reaches the runner as a failed tool call with the conflict's message.
      expect(JSON.stringify(call)).toContain('already exists on the host backend');
      expect(pick(call, 'result.result.stdout')).toBeUndefined();
      await s.lbot(['box', 'rm', 'conversation_c1']);
    });
  },
);
