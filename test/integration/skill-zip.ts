// Test helpers for skill archives: build zips with yazl, patch header fields, temp folders.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { crc32, deflateRawSync } from 'node:zlib';
import yazl from 'yazl';

export type ZipEntry = { name: string; data?: Buffer | string; mode?: number; dir?: boolean; compress?: boolean };

/** Builds a zip in memory. */
export function buildZip(entries: Iterable<ZipEntry>): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const z = new yazl.ZipFile();
    for (const e of entries) {
      if (e.dir) z.addEmptyDirectory(e.name, { mode: e.mode ?? 0o40755 });
      else z.addBuffer(Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data ?? ''), e.name, { mode: e.mode ?? 0o100644, compress: e.compress ?? true });
    }
    z.end();
    const chunks: Buffer[] = [];
    z.outputStream.on('data', (c: Buffer) => chunks.push(c));
    z.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    z.outputStream.on('error', reject);
  });
}

/** A fresh temp folder removed when the test ends. */
export async function tempDir(prefix = 'lbot-skill-test-'): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes `bytes` to `<dir>/<name>` and returns the path. */
export async function writeZip(dir: string, name: string, bytes: Buffer | Promise<Buffer>): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, await bytes);
  return file;
}

const LOCAL = 0x04034b50;
const CENTRAL = 0x02014b50;

/**
 * Rewrites a 32-bit (size) or 16-bit (flags) field of every local and central header, e.g. to make an
 * archive lie about its sizes. Offsets are from each header's signature.
 */
export function patchHeaders(buf: Buffer, field: 'uncompressedSize' | 'flags', value: number): Buffer {
  const out = Buffer.from(buf);
  for (let i = 0; i + 4 <= out.length; i++) {
    const sig = out.readUInt32LE(i);
    if (sig === LOCAL) {
      if (field === 'uncompressedSize') out.writeUInt32LE(value, i + 22);
      else out.writeUInt16LE(out.readUInt16LE(i + 6) | value, i + 6);
    } else if (sig === CENTRAL) {
      if (field === 'uncompressedSize') out.writeUInt32LE(value, i + 24);
      else out.writeUInt16LE(out.readUInt16LE(i + 8) | value, i + 8);
    }
  }
  return out;
}

/** A SKILL.md text. */
export const skillMd = (name: string, description = `${name} fixture`): string => `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n`;

/**
 * Writes a zip directly (stored entries, or deflated ones given pre-compressed), with zip64 end records when there are more
 * than 65,535 entries. Much faster than yazl for entry floods.
 */
export type RawZipEntry = { name: string; data: Buffer | string; deflated?: { bytes: Buffer; size: number; crc: number } };

/** Deflates `data` once so many entries can share the compressed bytes (cheap zip bombs). */
export function deflateOnce(data: Buffer): { bytes: Buffer; size: number; crc: number } {
  return { bytes: deflateRawSync(data, { level: 9 }), size: data.length, crc: crc32(data) };
}

export function buildStoredZip(entries: ReadonlyArray<RawZipEntry>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const plain = Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data);
    const data = e.deflated?.bytes ?? plain;
    const size = e.deflated?.size ?? plain.length;
    const method = e.deflated ? 8 : 0;
    const crc = e.deflated?.crc ?? crc32(plain);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x800, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const count = entries.length;
  const tail: Buffer[] = [];
  if (count > 0xfffe) {
    const z64 = Buffer.alloc(56);
    z64.writeUInt32LE(0x06064b50, 0);
    z64.writeBigUInt64LE(44n, 4);
    z64.writeUInt16LE(45, 12);
    z64.writeUInt16LE(45, 14);
    z64.writeBigUInt64LE(BigInt(count), 24);
    z64.writeBigUInt64LE(BigInt(count), 32);
    z64.writeBigUInt64LE(BigInt(cd.length), 40);
    z64.writeBigUInt64LE(BigInt(offset), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(0x07064b50, 0);
    locator.writeBigUInt64LE(BigInt(offset + cd.length), 8);
    locator.writeUInt32LE(1, 16);
    tail.push(z64, locator);
  }
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(Math.min(count, 0xffff), 8);
  eocd.writeUInt16LE(Math.min(count, 0xffff), 10);
  eocd.writeUInt32LE(cd.length, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, ...tail, eocd]);
}
