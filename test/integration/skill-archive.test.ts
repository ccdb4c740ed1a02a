// The safe zip extractor on real files: bombs, entry floods, links, climbing names, lying headers.
import { existsSync } from 'node:fs';
import { mkdir, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LbotError } from '../../src/core/errors.js';
import { extractZip } from '../../src/core/skills/archive.js';
import { DEFAULT_SKILL_LIMITS, type SkillLimits } from '../../src/core/skills/limits.js';
import { copyPackageTree } from '../../src/core/skills/tree.js';
import { buildStoredZip, buildZip, deflateOnce, patchHeaders, skillMd, tempDir, writeZip } from './skill-zip.js';

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/skills');
const MiB = 1024 * 1024;

async function refusal(p: Promise<unknown>): Promise<LbotError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof LbotError) return err;
    throw err;
  }
  throw new Error('expected the extraction to be refused');
}

const limits = (over: Partial<SkillLimits> = {}): SkillLimits => ({ ...DEFAULT_SKILL_LIMITS, ...over });

describe('extractZip', () => {
  it('unpacks a good archive and keeps the executable bit (0755) while other files get 0644', async () => {
    const dir = await tempDir();
    const dest = path.join(dir, 'out');
    const r = await extractZip(path.join(FIXTURES, 'hello-skill.zip'), dest, { limits: limits() });
    expect(r).toMatchObject({ files: 2, directories: 1 });
    expect((await stat(path.join(dest, 'hello-skill', 'run.sh'))).mode & 0o777).toBe(0o755);
    expect((await stat(path.join(dest, 'hello-skill', 'SKILL.md'))).mode & 0o777).toBe(0o644);
  });

  it('refuses a zip bomb (small archive, huge unpacked size) before writing any byte', async () => {
    const dir = await tempDir();
    const zeros = deflateOnce(Buffer.alloc(16 * MiB));
    const entries = [
      { name: 'bomb/SKILL.md', data: skillMd('bomb') },
      ...Array.from({ length: 16 }, (_, i) => ({ name: `bomb/zeros-${i}.bin`, data: '', deflated: zeros })),
    ];
    const archive = await writeZip(dir, 'bomb.zip', Promise.resolve(buildStoredZip(entries)));
    expect((await stat(archive)).size).toBeLessThan(MiB);
    const dest = path.join(dir, 'out');
    const err = await refusal(extractZip(archive, dest, { limits: limits() }));
    expect(err.code).toBe('skill.too_large');
    expect(err.message).toContain('max_compression_ratio');
    expect(existsSync(dest)).toBe(false);
    // With the ratio rule relaxed, the total-size rule still stops it before the disk.
    const total = await refusal(extractZip(archive, dest, { limits: limits({ max_compression_ratio: 1e9 }) }));
    expect(total.code).toBe('skill.too_large');
    expect(total.message).toContain('max_uncompressed_bytes');
    expect(existsSync(dest)).toBe(false);
  });

  it('counts bytes while streaming instead of trusting the headers', async () => {
    const dir = await tempDir();
    const honest = await buildZip([
      { name: 'p/SKILL.md', data: skillMd('p') },
      { name: 'p/big.bin', data: Buffer.alloc(4 * MiB, 7) },
    ]);
    const lying = await writeZip(dir, 'lying.zip', patchHeaders(honest, 'uncompressedSize', 100));
    const dest = path.join(dir, 'out');
    const err = await refusal(extractZip(lying, dest, { limits: limits() }));
    expect(['skill.invalid_archive', 'skill.too_large']).toContain(err.code);
    expect(existsSync(dest)).toBe(false);
    // A single file above max_file_bytes is stopped by the running count too (headers honest here).
    const big = await writeZip(dir, 'big.zip', Promise.resolve(honest));
    const perFile = await refusal(extractZip(big, dest, { limits: limits({ max_file_bytes: MiB, max_compression_ratio: 1e9 }) }));
    expect(perFile.code).toBe('skill.too_large');
    expect(perFile.message).toContain('max_file_bytes');
  });

  it('refuses 100,000 tiny entries from the archive directory, before reading any entry', async () => {
    const dir = await tempDir();
    const archive = await writeZip(
      dir,
      'flood.zip',
      Promise.resolve(buildStoredZip(Array.from({ length: 100_000 }, (_, i) => ({ name: `f/${i}`, data: 'x' })))),
    );
    const dest = path.join(dir, 'out');
    let seen = 0;
    const err = await refusal(extractZip(archive, dest, { limits: limits(), onFile: () => seen++ }));
    expect(err.code).toBe('skill.too_large');
    expect(err.message).toContain('max_entries (entries: 100000 > 5000)');
    expect(seen).toBe(0);
    expect(existsSync(dest)).toBe(false);
    // Under a raised entry cap the same flood unpacks, so the writer above builds a valid archive.
    const small = await writeZip(dir, 'small.zip', Promise.resolve(buildStoredZip(Array.from({ length: 70_000 }, (_, i) => ({ name: `f/${i}`, data: 'x' })))));
    await expect(extractZip(small, dest, { limits: limits({ max_entries: 69_999 }) })).rejects.toThrow('70000 > 69999');
  });

  it.each([
    ['symlink.zip', 'symbolic link'],
    ['dotdot-normalised.zip', 'dd/../../../evil.txt'],
    ['traversal.zip', '../evil.txt'],
    ['backslash.zip', '..\\\\evil.txt'],
    ['absolute.zip', '/tmp/lbot-abs.txt'],
    ['drive-letter.zip', 'C:/x.txt'],
    ['nul-name.zip', 'NUL byte'],
  ])('refuses %s with skill.unsafe_path and writes nothing anywhere', async (fixture, words) => {
    const dir = await tempDir();
    const dest = path.join(dir, 'a', 'b', 'out');
    await mkdir(path.dirname(dest), { recursive: true });
    const err = await refusal(extractZip(path.join(FIXTURES, fixture), dest, { limits: limits() }));
    expect(err.code).toBe('skill.unsafe_path');
    expect(err.message).toContain(words);
    expect(existsSync(dest)).toBe(false);
    expect(await readdir(path.join(dir, 'a', 'b'))).toEqual([]);
    expect(await readdir(path.join(dir, 'a'))).toEqual(['b']);
    expect(existsSync('/tmp/lbot-abs.txt')).toBe(false);
  });

  it('refuses duplicate names after normalisation, encrypted entries, corrupt and oversized archives', async () => {
    const dir = await tempDir();
    const dup = await writeZip(
      dir,
      'dup.zip',
      buildZip([
        { name: 'p/a.txt', data: '1' },
        { name: 'p/./a.txt', data: '2' },
      ]),
    );
    expect((await refusal(extractZip(dup, path.join(dir, 'o1'), { limits: limits() }))).message).toContain('duplicate');
    const enc = await writeZip(dir, 'enc.zip', patchHeaders(await buildZip([{ name: 'p/a.txt', data: 'secret' }]), 'flags', 1));
    const encErr = await refusal(extractZip(enc, path.join(dir, 'o2'), { limits: limits() }));
    expect(encErr.code).toBe('skill.invalid_archive');
    expect(encErr.message).toContain('encrypted');
    expect((await refusal(extractZip(path.join(FIXTURES, 'corrupt.zip'), path.join(dir, 'o3'), { limits: limits() }))).code).toBe('skill.invalid_archive');
    const empty = path.join(dir, 'empty.zip');
    await writeFile(empty, '');
    expect((await refusal(extractZip(empty, path.join(dir, 'o4'), { limits: limits() }))).code).toBe('skill.invalid_archive');
    const tooBig = await refusal(extractZip(path.join(FIXTURES, 'hello-skill.zip'), path.join(dir, 'o5'), { limits: limits({ max_archive_bytes: 100 }) }));
    expect(tooBig.code).toBe('skill.too_large');
    expect(tooBig.message).toContain('max_archive_bytes');
    for (const o of ['o1', 'o2', 'o3', 'o4', 'o5']) expect(existsSync(path.join(dir, o))).toBe(false);
  });

  it('stops when the signal aborts mid-extraction and removes the partial tree', async () => {
    const dir = await tempDir();
    const archive = await writeZip(dir, 'many.zip', buildZip(Array.from({ length: 50 }, (_, i) => ({ name: `p/${i}.txt`, data: `${i}` }))));
    const controller = new AbortController();
    const dest = path.join(dir, 'out');
    const err = await refusal(
      extractZip(archive, dest, { limits: limits(), signal: controller.signal, onFile: ({ index }) => index === 10 && controller.abort() }),
    );
    expect(err.code).toBe('cancelled');
    expect(existsSync(dest)).toBe(false);
  });
});

describe('copyPackageTree (directory sources)', () => {
  it('refuses symbolic links and too many entries, and skips VCS and cache folders', async () => {
    const dir = await tempDir();
    const src = path.join(dir, 'src');
    await mkdir(path.join(src, '.git'), { recursive: true });
    await writeFile(path.join(src, '.git', 'HEAD'), 'x');
    await writeFile(path.join(src, 'SKILL.md'), skillMd('src'));
    const ok = await copyPackageTree(src, path.join(dir, 'copy'), limits());
    expect(ok.files).toBe(1);
    expect(existsSync(path.join(dir, 'copy', '.git'))).toBe(false);
    await symlink('/etc/passwd', path.join(src, 'passwd'));
    const link = await refusal(copyPackageTree(src, path.join(dir, 'copy2'), limits()));
    expect(link.code).toBe('skill.unsafe_path');
    expect(link.message).toContain('passwd');
    expect(existsSync(path.join(dir, 'copy2'))).toBe(false);
    const many = await refusal(copyPackageTree(src, path.join(dir, 'copy3'), limits({ max_entries: 1 })));
    expect(many.code).toBe('skill.too_large');
  });
});
