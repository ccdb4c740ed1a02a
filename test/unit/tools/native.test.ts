// Native tools' parameter checks and virtual paths before anything reaches the box (skills-mcp-tools.md §2; AC-223).
import { describe, expect, it } from 'vitest';
import { NativeToolSource, type BoxToolPort, type FileOp } from '../../../src/core/tools/native.js';
import { globMatcherSource } from '../../../src/core/tools/glob.js';
import { resolveWorkspacePath, isUnderWorkspace } from '../../../src/core/tools/paths.js';
import { translatePattern } from '../../../src/core/tools/regex.js';

function recorder() {
  const ops: FileOp[] = [];
  const port: BoxToolPort = {
    available: async () => true,
    exec: async (_s, req) => ({ ran: req }),
    fileOp: async (_s, op) => {
      ops.push(op);
      return { ok: true };
    },
  };
  return { ops, tools: new NativeToolSource(port, { id: 'sess' }) };
}
const ctx = { run_id: 'r', signal: new AbortController().signal };

describe('workspace paths', () => {
  it('refuses paths that leave /workspace, including by .. (AC-223)', () => {
    for (const p of ['/etc/passwd', '/workspace/../../etc/passwd', '/workspace2/x', '/', '/workspace/a/../../tmp']) {
      expect(() => resolveWorkspacePath(p), p).toThrow(/outside the workspace/);
    }
  });
  it('normalises blanks, relative paths and trailing slashes', () => {
    expect(resolveWorkspacePath('')).toBe('/workspace');
    expect(resolveWorkspacePath('a/b')).toBe('/workspace/a/b');
    expect(resolveWorkspacePath('/workspace/a/./b/')).toBe('/workspace/a/b');
    expect(isUnderWorkspace('/workspace2')).toBe(false);
  });
});

describe('native tool calls', () => {
  it('rejects escaping paths before the box is asked', async () => {
    const { ops, tools } = recorder();
    await expect(tools.call('read', { path: '/etc/passwd' }, ctx)).rejects.toThrow(/outside the workspace/);
    await expect(tools.call('write', { path: '/workspace/../x', content: '' }, ctx)).rejects.toThrow(/outside the workspace/);
    expect(ops).toEqual([]);
  });

  it('rejects unknown and missing parameters', async () => {
    const { tools } = recorder();
    await expect(tools.call('read', { path: '/workspace/a', extra: 1 }, ctx)).rejects.toThrow(/Invalid parameters for read/);
    await expect(tools.call('exec', {}, ctx)).rejects.toThrow(/Invalid parameters for exec/);
  });

  it('refuses an empty old_string softly and bad regexes softly', async () => {
    const { tools } = recorder();
    expect(await tools.call('edit', { path: '/workspace/a', old_string: '', new_string: 'x' }, ctx)).toEqual({
      ok: false,
      error: 'old_string must not be empty.',
    });
    expect(await tools.call('grep', { pattern: '(' }, ctx)).toMatchObject({ ok: false, error: expect.stringContaining('Invalid regex') });
  });

  it('passes normalised requests to the box', async () => {
    const { ops, tools } = recorder();
    await tools.call('glob', { pattern: '*.py', path: '/workspace/src/' }, ctx);
    await tools.call('grep', { pattern: '(?i)todo', include: '*.ts' }, ctx);
    expect(ops[0]).toMatchObject({ op: 'glob', path: '/workspace/src', max: 100 });
    expect(ops[1]).toMatchObject({ op: 'grep', path: '/workspace', flags: 'ui', max_matches: 200, max_files: 5000 });
  });
});

describe('glob and regex dialects', () => {
  const m = (glob: string, p: string) => new RegExp(globMatcherSource(glob)).test(p);
  it('matches at any depth, ** across directories, braces and classes', () => {
    expect(m('*.txt', 'a.txt')).toBe(true);
    expect(m('*.txt', 'x/y/a.txt')).toBe(true);
    expect(m('**/*.py', 'a/b/c.py')).toBe(true);
    expect(m('src/**/*.ts', 'src/a/b.ts')).toBe(true);
    expect(m('src/*.ts', 'src/a/b.ts')).toBe(false);
    expect(m('*.{js,ts}', 'x.ts')).toBe(true);
    expect(m('[ab].md', 'b.md')).toBe(true);
    expect(m('?.md', 'ab.md')).toBe(false);
    expect(m('a.txt', 'ba.txt')).toBe(false);
  });
  it('translates Python spellings and rejects other inline flags', () => {
    expect(translatePattern('(?P<x>a)(?P=x)')).toEqual({ source: '(?<x>a)\\k<x>', flags: 'u' });
    expect(translatePattern('(?i)abc').flags).toBe('ui');
    expect(() => translatePattern('(?m)x')).toThrow(/inline flag/);
  });
});
