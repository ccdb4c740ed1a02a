// Entry-name checks for archives (skills-mcp-tools.md §1.7) and package-relative paths (AC-138, §0.4).
import { describe, expect, it } from 'vitest';
import { LbotError } from '../../src/core/errors.js';
import { checkEntryName, unixFileType, S_IFLNK } from '../../src/core/skills/archive-names.js';
import { checkPackageRelPath } from '../../src/core/skills/file-path.js';
import { thrown } from '../helpers/thrown.js';

const refusal = (fn: () => unknown): LbotError => thrown(fn, LbotError);

describe('archive entry names', () => {
  it('normalises safe names and recognises directories', () => {
    expect(checkEntryName('pkg/SKILL.md', 1024)).toEqual({ path: 'pkg/SKILL.md', isDirectory: false });
    expect(checkEntryName('pkg/scripts/', 1024)).toEqual({ path: 'pkg/scripts', isDirectory: true });
    expect(checkEntryName('pkg\\scripts\\run.sh', 1024)).toEqual({ path: 'pkg/scripts/run.sh', isDirectory: false });
    expect(checkEntryName('./pkg//a/../b.txt', 1024)).toEqual({ path: 'pkg/b.txt', isDirectory: false });
    expect(checkEntryName('./', 1024)).toBeNull();
  });

  it.each([
    ['../evil.txt', 'leaves the extraction folder'],
    ['..\\evil.txt', 'leaves the extraction folder'],
    ['a/../../evil.txt', 'leaves the extraction folder'],
    ['a\\..\\..\\evil.txt', 'leaves the extraction folder'],
    ['..', 'leaves the extraction folder'],
    ['/tmp/lbot-abs.txt', 'absolute path'],
    ['\\tmp\\x', 'absolute path'],
    ['C:/x.txt', 'drive-letter path'],
    ['c:x.txt', 'drive-letter path'],
    ['C:\\x.txt', 'drive-letter path'],
    ['a\0b', 'NUL byte'],
    ['x'.repeat(1025), 'longer than 1024 bytes'],
  ])('refuses %j with skill.unsafe_path naming the entry', (name, reason) => {
    const err = refusal(() => checkEntryName(name, 1024));
    expect(err.code).toBe('skill.unsafe_path');
    expect(err.message).toContain(JSON.stringify(name).slice(0, 40));
    expect(err.message).toContain(reason);
  });

  it('reads the Unix file type from external attributes', () => {
    expect(unixFileType((0o120777 << 16) >>> 0)).toBe(S_IFLNK);
    expect(unixFileType((0o100644 << 16) >>> 0)).toBe(0o100000);
    expect(unixFileType(0)).toBeNull();
  });
});

describe('package-relative paths (AC-138)', () => {
  it('accepts plain relative paths', () => {
    expect(checkPackageRelPath('run.sh')).toBe('run.sh');
    expect(checkPackageRelPath('scripts/./run.sh')).toBe('scripts/run.sh');
    expect(checkPackageRelPath('scripts\\run.sh')).toBe('scripts/run.sh');
    expect(checkPackageRelPath('my%20file.md')).toBe('my file.md');
  });

  it.each([
    '../../lbot.config.json',
    '%2e%2e/%2e%2e/x',
    '%252e%252e/x',
    '..%2fx',
    '..\\x',
    'a/../../x',
    'a/../b',
    '/etc/passwd',
    '%2Fetc%2Fpasswd',
    'C:/x',
    'a\0b',
    '',
    '.',
  ])('refuses %j with skill.unsafe_path', (p) => {
    expect(refusal(() => checkPackageRelPath(p)).code).toBe('skill.unsafe_path');
  });
});
