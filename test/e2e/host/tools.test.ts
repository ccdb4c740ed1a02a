// Native box tools through a real run: granted exec runs in the run's box session, exec is absent unless
// granted (AC-217), deny beats allow (AC-218), no box means no native tools (AC-119), and file tools stay in
// the workspace (AC-223).
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { boxBackend } from '../../helpers/box.js';
import { api, done, dump, list, pick, reports, scenario, SCRIPTED, type Scenario } from './harness.js';
import { withReason } from '../../helpers/skip.js';

const box = boxBackend();
if (!box.usable) console.warn(`native tool tests skipped: ${box.reason}`);

async function bindingFile(s: Scenario, resource_policy: Record<string, unknown>): Promise<string> {
  return s.writeJson(`binding-${randomUUID()}.json`, { binding_id: 'b1', runner_id: SCRIPTED, resource_policy });
}

const toolNames = (ctx: unknown) => list(ctx, 'resources.tools').map((t) => pick(t, 'tool_name'));

describe.skipIf(!box.usable)(withReason('native tools in runs', !box.usable && box.reason), () => {
  it("a granted exec runs inside the conversation's box session; files persist across runs", async () => {
    const s = await scenario();
    const binding = await bindingFile(s, { allowed_tool_names: ['exec', 'read'] });
    const first = await s.run([dump, api('tools.call', { tool_name: 'exec', parameters: { command: 'echo kept > /workspace/note; id -u' } }), done()], {
      json: true,
      args: ['--binding', binding],
    });
    expect(first.exitCode, first.stderr).toBe(0);
    const [ctx, exec] = reports(first.stdout);
    expect(toolNames(ctx)).toEqual(['exec', 'read']);
    expect(exec).toMatchObject({ ok: true, result: { result: { status: 'completed', exit_code: 0, session_id: 'conversation_c1' } } });
    expect(String(pick(exec, 'result.result.stdout')).trim()).not.toBe('0');
    const second = await s.run(
      [
        api('tools.call', { tool_name: 'read', parameters: { path: '/workspace/note' } }),
        api('tools.call', { tool_name: 'read', parameters: { path: '/workspace/../../etc/passwd' } }),
        done(),
      ],
      { json: true, args: ['--binding', binding] },
    );
    const [read, escape] = reports(second.stdout);
    expect(JSON.stringify(read)).toContain('kept');
    expect(escape).toMatchObject({ ok: false });
    expect(JSON.stringify(escape)).toMatch(/outside the workspace/);
    expect(JSON.stringify(escape)).not.toContain('root:');
    await s.lbot(['box', 'rm', 'conversation_c1']);
  });

  it('AC-217 exec is denied by default, and AC-218 deny beats allow', async () => {
    const s = await scenario();
    const none = await s.run([dump, api('tools.call', { tool_name: 'exec', parameters: { command: 'true' } }), done()], { json: true });
    const [ctx, call] = reports(none.stdout);
    expect(toolNames(ctx)).not.toContain('exec');
    expect(call).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    const binding = await bindingFile(s, { allowed_tool_names: ['exec', 'read'], denied_tool_names: ['exec'] });
    const denied = await s.run([dump, api('tools.call', { tool_name: 'exec', parameters: { command: 'true' } }), done()], {
      json: true,
      args: ['--binding', binding],
    });
    const [ctx2, call2] = reports(denied.stdout);
    expect(toolNames(ctx2)).toEqual(['read']);
    expect(call2).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
  });
});

describe('native tools without a box', () => {
  it('AC-119 with the box disabled, exec is not granted even when the binding allows it', async () => {
    const s = await scenario();
    const binding = await bindingFile(s, { allowed_tool_names: ['exec'] });
    const r = await s.run([dump, api('tools.call', { tool_name: 'exec', parameters: { command: 'true' } }), done()], {
      json: true,
      args: ['--binding', binding],
      env: { LBOT__BOX__ENABLED: 'false' },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const [ctx, call] = reports(r.stdout);
    expect(toolNames(ctx)).toEqual([]);
    expect(call).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
  });
});
