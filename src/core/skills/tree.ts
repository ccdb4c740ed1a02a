// Package trees on disk: a sorted, non-following walk, a limited copy that refuses links, mode normalisation.
import { chmod, copyFile, lstat, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { LbotError } from '../errors.js';
import type { SkillLimits } from './limits.js';

export type TreeEntryKind = 'file' | 'dir' | 'symlink' | 'other';
export type TreeEntry = { rel: string; kind: TreeEntryKind; mode: number; size: number };

/** Names never copied from a source directory: VCS data and runtime caches (skills-mcp-tools.md §9 Q26). */
export const IGNORED_SOURCE_NAMES: ReadonlySet<string> = new Set(['.git', '.venv', '.langbot', '.tmp', '.cache', '__pycache__', '.DS_Store']);

function kindOf(st: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): TreeEntryKind {
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isDirectory()) return 'dir';
  if (st.isFile()) return 'file';
  return 'other';
}

/** Orders relative paths by their UTF-8 bytes, so digests do not depend on locale or platform. */
export function compareRel(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * Lists every entry under `root` (not following links), sorted by relative '/'-separated path.
 * `skip` prunes an entry (and, for a directory, everything below it).
 */
export async function walkTree(root: string, skip?: (rel: string, name: string) => boolean, onEntry?: (count: number) => void): Promise<TreeEntry[]> {
  const out: TreeEntry[] = [];
  const queue: string[] = [''];
  while (queue.length > 0) {
    const dirRel = queue.shift() ?? '';
    const names = (await readdir(path.join(root, dirRel))).sort(compareRel);
    for (const name of names) {
      const rel = dirRel === '' ? name : `${dirRel}/${name}`;
      if (skip?.(rel, name)) continue;
      const st = await lstat(path.join(root, rel));
      const kind = kindOf(st);
      out.push({ rel, kind, mode: st.mode & 0o7777, size: kind === 'file' ? st.size : 0 });
      onEntry?.(out.length);
      if (kind === 'dir') queue.push(rel);
    }
  }
  return out.sort((a, b) => compareRel(a.rel, b.rel));
}

/** The mode lbot installs with: 0o755 for directories and owner-executable files, else 0o644. */
export function normalisedMode(entry: Pick<TreeEntry, 'kind' | 'mode'>): number {
  if (entry.kind === 'dir') return 0o755;
  return (entry.mode & 0o100) !== 0 ? 0o755 : 0o644;
}

/** Applies normalisedMode to every file and directory under `root` (and to `root` itself). */
export async function normaliseModes(root: string): Promise<void> {
  await chmod(root, 0o755);
  for (const entry of await walkTree(root)) {
    if (entry.kind === 'file' || entry.kind === 'dir') await chmod(path.join(root, entry.rel), normalisedMode(entry));
  }
}

function unsafeLink(rel: string, kind: TreeEntryKind): LbotError {
  const what = kind === 'symlink' ? 'symbolic link' : 'special file';
  return new LbotError('skill.unsafe_path', `Package contains an unsafe path: ${JSON.stringify(rel)} (${what}s are not allowed in a skill package)`, {
    details: { entry: rel, reason: what },
    hint: 'replace links with regular files; nothing was installed',
  });
}

/**
 * Copies a source package into `dest` (which must not exist): regular files and directories only,
 * ignored names skipped, entry count and sizes capped by `limits`. Links or special files are refused.
 */
export async function copyPackageTree(src: string, dest: string, limits: SkillLimits, signal?: AbortSignal): Promise<{ files: number; bytes: number }> {
  const entries = await walkTree(
    src,
    (_rel, name) => IGNORED_SOURCE_NAMES.has(name),
    (count) => {
      if (count > limits.max_entries) {
        throw new LbotError('skill.too_large', `Package exceeds max_entries (entries: more than ${limits.max_entries})`, {
          details: { limit: 'max_entries', max: limits.max_entries },
        });
      }
    },
  );
  let bytes = 0;
  for (const e of entries) {
    if (e.kind === 'symlink' || e.kind === 'other') throw unsafeLink(e.rel, e.kind);
    if (e.kind !== 'file') continue;
    if (e.size > limits.max_file_bytes) {
      throw new LbotError('skill.too_large', `Package exceeds max_file_bytes (${e.rel}: ${e.size} > ${limits.max_file_bytes})`, {
        details: { limit: 'max_file_bytes', entry: e.rel, value: e.size, max: limits.max_file_bytes },
      });
    }
    bytes += e.size;
    if (bytes > limits.max_uncompressed_bytes) {
      throw new LbotError('skill.too_large', `Package exceeds max_uncompressed_bytes (total: ${bytes} > ${limits.max_uncompressed_bytes})`, {
        details: { limit: 'max_uncompressed_bytes', value: bytes, max: limits.max_uncompressed_bytes },
      });
    }
  }
  await mkdir(dest, { mode: 0o755 });
  let files = 0;
  for (const e of entries) {
    if (signal?.aborted) throw new LbotError('cancelled', 'skill install was interrupted; nothing was installed');
    const to = path.join(dest, ...e.rel.split('/'));
    if (e.kind === 'dir') {
      await mkdir(to, { recursive: true, mode: 0o755 });
      continue;
    }
    await mkdir(path.dirname(to), { recursive: true, mode: 0o755 });
    await copyFile(path.join(src, ...e.rel.split('/')), to);
    await chmod(to, normalisedMode(e));
    files += 1;
  }
  return { files, bytes };
}
