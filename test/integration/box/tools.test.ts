// Native tools run inside the session: file tools cannot leave the workspace, even through planted
// symlinks (acceptance AC-119, AC-223; skills-mcp-tools.md §2).
import { afterEach, describe, expect, it } from 'vitest';
import { BindingSchema } from '../../../src/core/protocol/binding.js';
import { BoxToolPortImpl, createToolsHook } from '../../../src/runtime/tools/box-tools.js';
import { boxFixture, bwrapSkipReason, disposeFixture, skipNotice, type BoxFixture } from './helpers.js';
import { withReason } from '../../helpers/skip.js';

skipNotice('native tool tests');
const fixtures: BoxFixture[] = [];
afterEach(async () => {
  while (fixtures.length > 0) {
    const f = fixtures.pop();
    if (f) await disposeFixture(f);
  }
});

const ALL = ['exec', 'read', 'write', 'edit', 'glob', 'grep'];
const ctx = { run_id: 'run-1', signal: new AbortController().signal };

async function table(over: Record<string, unknown> = {}, allowed: string[] | null = ALL) {
  const f = boxFixture(over);
  fixtures.push(f);
  const binding = BindingSchema.parse({ binding_id: 'b1', runner_id: 'plugin:acme/x/default', resource_policy: { allowed_tool_names: allowed } });
  return {
    f,
    tools: await createToolsHook({ port: new BoxToolPortImpl(f.box) })({ binding, run_id: 'run-1', vars: { launcher_type: 'person', launcher_id: 'u1' } }),
  };
}

describe('native tools without a box', () => {
  it('are absent when the box is disabled, so they cannot be granted (AC-119)', async () => {
    const { tools } = await table({ enabled: false });
    expect(await tools.list()).toEqual([]);
    await expect(tools.call('exec', { command: 'true' }, ctx)).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe.skipIf(bwrapSkipReason !== null)(withReason('native tools in a bwrap session', bwrapSkipReason), () => {
  it('are listed when granted and the box is available (AC-119)', async () => {
    const { tools } = await table({}, ['exec']);
    expect((await tools.list()).map((t) => t.name)).toEqual(['exec']);
  });

  it('write, read, edit, glob and grep inside the session the exec tool uses', async () => {
    const { f, tools } = await table();
    expect(await tools.call('write', { path: '/workspace/src/a.py', content: 'x = 1\nprint(x)\n' }, ctx)).toMatchObject({
      ok: true,
      path: '/workspace/src/a.py',
    });
    expect(await tools.call('read', { path: '/workspace/src/a.py' }, ctx)).toEqual({ ok: true, content: 'x = 1\nprint(x)\n' });
    expect(await tools.call('edit', { path: '/workspace/src/a.py', old_string: 'x = 1', new_string: 'x = 2' }, ctx)).toMatchObject({ ok: true });
    expect(await tools.call('edit', { path: '/workspace/src/a.py', old_string: 'x', new_string: 'y' }, ctx)).toMatchObject({
      ok: false,
      error: expect.stringContaining('matches 2 locations'),
    });
    expect(await tools.call('glob', { pattern: '*.py' }, ctx)).toMatchObject({ ok: true, matches: ['/workspace/src/a.py'], total: 1 });
    expect(await tools.call('grep', { pattern: 'x = \\d', include: '*.py' }, ctx)).toMatchObject({
      matches: [{ file: '/workspace/src/a.py', line: 1, content: 'x = 2' }],
    });
    expect(await tools.call('read', { path: '/workspace/missing' }, ctx)).toEqual({ ok: false, error: 'File not found: /workspace/missing' });
    const run = (await tools.call('exec', { command: 'cat src/a.py' }, ctx)) as { stdout: string; session_id: string };
    expect(run.stdout).toBe('x = 2\nprint(x)\n');
    expect(run.session_id).toBe('person_u1');
    expect((await f.box.sessions()).map((s) => s.session_id)).toEqual(['person_u1']);
  });

  it('refuses paths outside the workspace with a tool error and no content (AC-223)', async () => {
    const { tools } = await table();
    for (const p of ['/workspace/../../etc/passwd', '/etc/passwd']) {
      await expect(tools.call('read', { path: p }, ctx)).rejects.toThrow(/outside the workspace/);
    }
  });

  it('does not follow symlinks planted in the workspace out of it', async () => {
    const { tools } = await table();
    await tools.call(
      'exec',
      {
        command: 'ln -s /etc/passwd /workspace/pw; ln -s /usr /workspace/usr; ln -s /tmp /workspace/t; mkdir -p /workspace/d; echo root > /workspace/d/ok.txt',
      },
      ctx,
    );
    await expect(tools.call('read', { path: '/workspace/pw' }, ctx)).rejects.toThrow(/outside the workspace/);
    await expect(tools.call('read', { path: '/workspace/usr/bin' }, ctx)).rejects.toThrow(/outside the workspace/);
    await expect(tools.call('write', { path: '/workspace/t/evil', content: 'x' }, ctx)).rejects.toThrow(/outside the workspace/);
    await expect(tools.call('write', { path: '/workspace/pw', content: 'x' }, ctx)).rejects.toThrow(/outside the workspace/);
    await expect(tools.call('edit', { path: '/workspace/pw', old_string: 'root', new_string: 'x' }, ctx)).rejects.toThrow(/outside the workspace/);
    await expect(tools.call('glob', { pattern: '*', path: '/workspace/usr' }, ctx)).rejects.toThrow(/outside the workspace/);
    await expect(tools.call('grep', { pattern: 'root', path: '/workspace/pw' }, ctx)).rejects.toThrow(/outside the workspace/);
    const grep = (await tools.call('grep', { pattern: 'root' }, ctx)) as { matches: Array<{ file: string }> };
    expect(grep.matches.map((m) => m.file)).toEqual(['/workspace/d/ok.txt']);
    const glob = (await tools.call('glob', { pattern: '**/*.txt' }, ctx)) as { matches: string[] };
    expect(glob.matches).toEqual(['/workspace/d/ok.txt']);
    const check = (await tools.call('exec', { command: 'ls /tmp/evil 2>&1 | wc -l; cat /etc/passwd | grep -c lbot' }, ctx)) as { stdout: string };
    expect(check.stdout).toBe('1\n1\n');
  });

  it('truncates long exec output to output_limit_chars', async () => {
    const { tools } = await table({ output_limit_chars: 4000 });
    const r = (await tools.call('exec', { command: "head -c 10000 /dev/zero | tr '\\0' a; printf b; head -c 10000 /dev/zero | tr '\\0' c" }, ctx)) as {
      stdout: string;
      stdout_truncated: boolean;
    };
    expect(r.stdout_truncated).toBe(true);
    expect(Array.from(r.stdout).length).toBeLessThanOrEqual(4000);
    expect(r.stdout).toMatch(/^a+\n\n\.\.\. \[\d+ characters truncated\] \.\.\.\n\nc+$/);
  });
});
