// The audit reaches the run record for calls the router cannot dispatch: unknown methods (answered -32601).
import { describe, expect, it } from 'vitest';
import { api, done, list, scenario, str, summaries } from './harness.js';

describe('audit of unknown methods', () => {
  it('a runner calling an unknown host method fails its run and the call is in `runs show --json`', async () => {
    const s = await scenario();
    const r = await s.run([api('nope.method', {}), done()], { json: true });
    expect(r.exitCode, r.stderr).not.toBe(0);
    const runId = str(summaries(r.stdout)[0], 'run_id');
    const show = await s.json(['runs', 'show', runId]);
    expect(show).toMatchObject({ status: 'failed', error: { code: 'runner.protocol_error' } });
    expect(list(show, 'api_calls')).toContainEqual(
      expect.objectContaining({ action: 'nope.method', decision: 'denied', code: 'invalid_argument', caller_plugin: 'acme/scripted', as_run_id: runId }),
    );
  });
});
