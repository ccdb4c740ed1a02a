// Archive entry names: the checks every entry passes before anything is written (skills-mcp-tools.md §1.7).
import path from 'node:path';
import { LbotError } from '../errors.js';

export type SafeEntryName = {
  /** Normalised, '/'-separated path relative to the extraction root. */
  path: string;
  isDirectory: boolean;
};

function unsafe(raw: string, reason: string): LbotError {
  return new LbotError('skill.unsafe_path', `Archive contains an unsafe path: ${JSON.stringify(raw)} (${reason})`, {
    details: { entry: raw, reason },
    hint: 'the archive was refused as a whole and nothing was written; rebuild it with relative paths inside one folder',
  });
}

/**
 * Validates one entry name. `\` counts as a separator; NUL bytes, drive letters, absolute paths and
 * names that climb out after normalisation are refused. Returns null for the root itself (`./`).
 */
export function checkEntryName(raw: string, maxNameBytes: number): SafeEntryName | null {
  if (raw.includes('\0')) throw unsafe(raw, 'NUL byte in the name');
  if (Buffer.byteLength(raw, 'utf8') > maxNameBytes) throw unsafe(raw, `name longer than ${maxNameBytes} bytes`);
  const slashed = raw.replace(/\\/g, '/');
  if (/^[A-Za-z]:/.test(slashed)) throw unsafe(raw, 'drive-letter path');
  if (slashed.startsWith('/')) throw unsafe(raw, 'absolute path');
  const isDirectory = slashed.endsWith('/');
  const normal = path.posix.normalize(slashed).replace(/\/+$/, '');
  if (normal === '' || normal === '.') return null;
  if (normal === '..' || normal.startsWith('../')) throw unsafe(raw, 'leaves the extraction folder after normalisation');
  return { path: normal, isDirectory };
}

/** Resolves a checked entry path under `root` and proves it stays inside (defence in depth). */
export function resolveInside(root: string, rel: string, raw: string): string {
  const target = path.resolve(root, ...rel.split('/'));
  if (target !== root && !target.startsWith(root + path.sep)) throw unsafe(raw, 'resolves outside the extraction folder');
  return target;
}

/** Unix file type bits of a zip entry's external attributes, or null when the archive has none. */
export function unixFileType(externalFileAttributes: number): number | null {
  // Checked whatever the "made by" system says: a symlink is refused even in an archive that claims DOS.
  const mode = (externalFileAttributes >>> 16) & 0xffff;
  if (mode === 0) return null;
  const type = mode & 0o170000;
  return type === 0 ? null : type;
}

export const S_IFREG = 0o100000;
export const S_IFDIR = 0o040000;
export const S_IFLNK = 0o120000;

/** Describes a non-regular Unix file type for error messages. */
export function describeFileType(type: number): string {
  switch (type) {
    case S_IFLNK:
      return 'symbolic link';
    case 0o010000:
      return 'FIFO';
    case 0o020000:
      return 'character device';
    case 0o060000:
      return 'block device';
    case 0o140000:
      return 'socket';
    default:
      return `file type 0o${type.toString(8)}`;
  }
}

/** True when the owner-execute bit is set in the entry's Unix mode. */
export function isExecutableEntry(externalFileAttributes: number): boolean {
  return ((externalFileAttributes >>> 16) & 0o100) !== 0;
}
