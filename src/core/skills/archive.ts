// Safe streaming zip extraction: names, types and declared sizes are checked for every entry first,
// then bytes are counted while they stream, so a bomb or a lie in the headers stops before the disk.
import { createWriteStream } from 'node:fs';
import { chmod, mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { LbotError, isLbotError } from '../errors.js';
import { checkEntryName, describeFileType, isExecutableEntry, resolveInside, S_IFDIR, S_IFREG, unixFileType } from './archive-names.js';
import type { SkillLimits } from './limits.js';

export type ExtractOptions = {
  limits: SkillLimits;
  signal?: AbortSignal;
  /** Called before each file's bytes are written (progress, tests that interrupt an install). */
  onFile?: (info: { path: string; index: number; total: number }) => void;
};

export type ExtractResult = { files: number; directories: number; bytes: number };

type PlannedEntry = { entry: Entry; path: string; raw: string; isDirectory: boolean; executable: boolean };

function tooLarge(what: string, limit: string, value: number, max: number, entry?: string): LbotError {
  return new LbotError('skill.too_large', `Archive exceeds ${limit} (${what}: ${value} > ${max})`, {
    details: { limit, value, max, ...(entry === undefined ? {} : { entry }) },
    hint: `nothing was installed; raise skills.install.${limit} in the config if the package is legitimate`,
  });
}

function invalidArchive(file: string, reason: string, cause?: unknown): LbotError {
  return new LbotError('skill.invalid_archive', `${file} is not a valid .zip archive: ${reason}`, {
    details: { file, reason },
    cause,
    hint: 'check that the file is a complete, unencrypted zip (deflate or stored entries)',
  });
}

function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new LbotError('cancelled', 'skill install was interrupted; nothing was installed');
}

/** Counts bytes of one entry while they stream and stops at the first limit crossed. */
class ByteBudget extends Transform {
  #seen = 0;
  constructor(
    private readonly entry: PlannedEntry,
    private readonly limits: SkillLimits,
    private readonly total: { bytes: number },
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.#seen += chunk.length;
    this.total.bytes += chunk.length;
    const { limits, entry } = this;
    if (this.#seen > limits.max_file_bytes) return done(tooLarge(`entry ${entry.path}`, 'max_file_bytes', this.#seen, limits.max_file_bytes, entry.raw));
    if (this.total.bytes > limits.max_uncompressed_bytes) {
      return done(tooLarge('unpacked total', 'max_uncompressed_bytes', this.total.bytes, limits.max_uncompressed_bytes, entry.raw));
    }
    const compressed = Math.max(entry.entry.compressedSize, 1);
    if (this.#seen > limits.ratio_min_bytes && this.#seen / compressed > limits.max_compression_ratio) {
      return done(
        tooLarge(`compression ratio of ${entry.path}`, 'max_compression_ratio', Math.round(this.#seen / compressed), limits.max_compression_ratio, entry.raw),
      );
    }
    done(null, chunk);
  }
}

function decodeName(entry: Entry): string {
  // decodeStrings is off so yauzl does not reject names itself: our checks name the entry and the reason.
  return yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, true);
}

async function planEntries(zip: ZipFile, file: string, opts: ExtractOptions): Promise<PlannedEntry[]> {
  const { limits } = opts;
  const planned: PlannedEntry[] = [];
  const seen = new Set<string>();
  let declared = 0;
  let count = 0;
  for await (const entry of zip.eachEntry()) {
    checkAborted(opts.signal);
    count += 1;
    if (count > limits.max_entries) throw tooLarge('entries', 'max_entries', count, limits.max_entries);
    const raw = decodeName(entry);
    const name = checkEntryName(raw, limits.max_name_bytes);
    const type = unixFileType(entry.externalFileAttributes);
    if (type !== null && type !== S_IFREG && type !== S_IFDIR) {
      throw new LbotError('skill.unsafe_path', `Archive contains an unsafe path: ${JSON.stringify(raw)} (${describeFileType(type)} entries are not allowed)`, {
        details: { entry: raw, reason: describeFileType(type) },
        hint: 'replace links with regular files; the archive was refused and nothing was written',
      });
    }
    if (name === null) continue;
    if (entry.isEncrypted()) throw invalidArchive(file, `entry ${JSON.stringify(raw)} is encrypted`);
    const isDirectory = name.isDirectory || type === S_IFDIR;
    if (!isDirectory && entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
      throw invalidArchive(file, `entry ${JSON.stringify(raw)} uses unsupported compression method ${entry.compressionMethod}`);
    }
    if (seen.has(name.path)) {
      throw new LbotError('skill.unsafe_path', `Archive contains an unsafe path: ${JSON.stringify(raw)} (duplicate of an earlier entry after normalisation)`, {
        details: { entry: raw, reason: 'duplicate' },
      });
    }
    seen.add(name.path);
    if (!isDirectory) {
      if (entry.uncompressedSize > limits.max_file_bytes)
        throw tooLarge(`entry ${name.path}`, 'max_file_bytes', entry.uncompressedSize, limits.max_file_bytes, raw);
      declared += entry.uncompressedSize;
      if (declared > limits.max_uncompressed_bytes) throw tooLarge('unpacked total', 'max_uncompressed_bytes', declared, limits.max_uncompressed_bytes, raw);
      const ratio = entry.uncompressedSize / Math.max(entry.compressedSize, 1);
      if (entry.uncompressedSize > limits.ratio_min_bytes && ratio > limits.max_compression_ratio) {
        throw tooLarge(`compression ratio of ${name.path}`, 'max_compression_ratio', Math.round(ratio), limits.max_compression_ratio, raw);
      }
    }
    planned.push({ entry, path: name.path, raw, isDirectory, executable: isExecutableEntry(entry.externalFileAttributes) });
  }
  return planned;
}

async function writeEntries(zip: ZipFile, dest: string, planned: PlannedEntry[], opts: ExtractOptions): Promise<ExtractResult> {
  const total = { bytes: 0 };
  const result: ExtractResult = { files: 0, directories: 0, bytes: 0 };
  const files = planned.filter((p) => !p.isDirectory);
  for (const dir of planned.filter((p) => p.isDirectory)) {
    await mkdir(resolveInside(dest, dir.path, dir.raw), { recursive: true, mode: 0o755 });
    result.directories += 1;
  }
  for (const [index, item] of files.entries()) {
    checkAborted(opts.signal);
    opts.onFile?.({ path: item.path, index, total: files.length });
    checkAborted(opts.signal);
    const target = resolveInside(dest, item.path, item.raw);
    await mkdir(path.dirname(target), { recursive: true, mode: 0o755 });
    const mode = item.executable ? 0o755 : 0o644;
    const source = await zip.openReadStreamPromise(item.entry);
    await pipeline(
      source,
      new ByteBudget(item, opts.limits, total),
      createWriteStream(target, { flags: 'wx', mode }),
      opts.signal ? { signal: opts.signal } : {},
    );
    await chmod(target, mode);
    result.files += 1;
  }
  result.bytes = total.bytes;
  return result;
}

/**
 * Extracts `archive` into `dest`, which must not exist yet. All entries are validated before the first
 * byte is written; on any failure `dest` is removed, so a caller never sees a partial tree.
 */
export async function extractZip(archive: string, dest: string, opts: ExtractOptions): Promise<ExtractResult> {
  const label = path.basename(archive);
  const size = (await stat(archive)).size;
  if (size === 0) throw invalidArchive(label, 'the file is empty');
  if (size > opts.limits.max_archive_bytes) throw tooLarge('archive size', 'max_archive_bytes', size, opts.limits.max_archive_bytes);
  let zip: ZipFile;
  try {
    zip = await yauzl.openPromise(archive, { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: true, strictFileNames: true });
  } catch (err) {
    throw invalidArchive(label, err instanceof Error ? err.message : String(err), err);
  }
  try {
    await mkdir(dest, { mode: 0o755 });
  } catch (err) {
    zip.close();
    throw err;
  }
  try {
    if (zip.entryCount > opts.limits.max_entries) throw tooLarge('entries', 'max_entries', zip.entryCount, opts.limits.max_entries);
    const planned = await planEntries(zip, label, opts);
    return await writeEntries(zip, dest, planned, opts);
  } catch (err) {
    await rm(dest, { recursive: true, force: true });
    if (isLbotError(err)) throw err;
    if (opts.signal?.aborted) throw new LbotError('cancelled', 'skill install was interrupted; nothing was installed', { cause: err });
    throw invalidArchive(label, err instanceof Error ? err.message : String(err), err);
  } finally {
    zip.close();
  }
}
