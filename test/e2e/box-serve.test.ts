// `lbot box serve` on the built binary: its help, its flag refusals, and a real run whose native tools run on
// the remote box named by box.remote.url (the host's own data dir gets no box session).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RemoteBoxClient } from '../../src/runtime/box/remote/client.js';
import { startBoxServe, TEST_BOX_TOKEN } from '../helpers/box-serve.js';
import { withReason } from '../helpers/skip.js';
import { bwrapSkipReason } from '../integration/box/helpers.js';
import { api, done, dump, list, pick, reports, scenario, SCRIPTED } from './host/harness.js';

describe('lbot box serve (cli)', () => {
  it('documents its flags, the token and the exit codes in --help', async () => {
    const s = await scenario();
    const r = await s.lbot(['box', 'serve', '--help']);
    expect(r.exitCode).toBe(0);
    for (const word of ['--listen', '--tls-cert', '--tls-key', '--body-limit', 'LBOT_BOX_TOKEN', 'box.token', '401', 'box.remote.url', 'Exit codes']) {
      expect(r.stdout).toContain(word);
    }
  });

  it('refuses a bad --listen and a certificate without its key (exit 2, invalid_argument)', async () => {
    const s = await scenario();
    for (const args of [
      ['--listen', 'nohost'],
      ['--listen', '127.0.0.1:99999'],
      ['--tls-cert', '/nonexistent.pem'],
    ]) {
      const r = await s.lbot(['--json', 'box', 'serve', ...args]);
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: 'invalid_argument' } });
    }
  });
});

describe.skipIf(bwrapSkipReason !== null)(withReason('a host on a remote box', bwrapSkipReason), () => {
  it("runs a run's exec tool on the remote box and keeps the session there; a wrong token leaves the tools out", async () => {
    const s = await scenario();
    const server = await startBoxServe({ dataDir: path.join(s.root, 'box-machine') });
    try {
      const binding = await s.writeJson('binding.json', { binding_id: 'b1', runner_id: SCRIPTED, resource_policy: { allowed_tool_names: ['exec', 'read'] } });
      const env = { LBOT__BOX__REMOTE__URL: server.url, LBOT_BOX_TOKEN: TEST_BOX_TOKEN };
      const first = await s.run([dump, api('tools.call', { tool_name: 'exec', parameters: { command: 'echo remote > /workspace/note; id -u' } }), done()], {
        json: true,
        args: ['--binding', binding],
        env,
      });
      expect(first.exitCode, first.stderr).toBe(0);
      const [ctx, exec] = reports(first.stdout);
      expect(list(ctx, 'resources.tools').map((t) => pick(t, 'tool_name'))).toEqual(['exec', 'read']);
      expect(exec).toMatchObject({ ok: true, result: { result: { status: 'completed', exit_code: 0, session_id: 'conversation_c1', backend: 'bwrap' } } });
      const second = await s.run([api('tools.call', { tool_name: 'read', parameters: { path: '/workspace/note' } }), done()], {
        json: true,
        args: ['--binding', binding],
        env,
      });
      expect(JSON.stringify(reports(second.stdout)[0])).toContain('remote');
      // The session lives on the box machine, not in the host's data dir.
      const client = new RemoteBoxClient({ url: server.url, token: TEST_BOX_TOKEN });
      expect((await client.sessions()).map((x) => x.session_id)).toEqual(['conversation_c1']);
      expect(await s.jsonList(['box', 'sessions'])).toEqual([]);

      const wrong = await s.run([dump, done()], { json: true, args: ['--binding', binding], env: { ...env, LBOT_BOX_TOKEN: 'wrong' } });
      expect(wrong.exitCode, wrong.stderr).toBe(0);
      expect(list(reports(wrong.stdout)[0], 'resources.tools')).toEqual([]);
      expect(wrong.stderr).toMatch(/native box tools are off.*bearer token/);
      await client.removeSession('conversation_c1');
    } finally {
      await server.stop();
    }
    expect(server.proc.exitCode).toBe(0);
  });
});
