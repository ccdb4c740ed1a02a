// Content-addressed artifact bytes: `<data-dir>/artifacts/sha256/ab/cdef…`, written to a temp file, fsynced, renamed.
import { createHash } from 'node:crypto';
import { closeSync, existsSync, fstatSync, fsyncSync, mkdirSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import { LbotError } from '../../errors.js';
import { writePrivateFile } from '../private-files.js';
import { reasonOf, storeUnavailable } from './store-errors.js';

const SHA256_HEX = /^[0-9a-f]{64}$/;

export type BlobRange = { bytes: Buffer; total: number };

/** The blob directory of one data dir. Paths come only from validated hex digests, never from names. */
export class BlobFiles {
  readonly root: string;

  constructor(artifactsDir: string) {
    this.root = path.join(artifactsDir, 'sha256');
  }

  /** `<root>/ab/cdef…` for a lowercase sha256 hex digest; anything else is refused. */
  pathOf(sha256: string): string {
    if (!SHA256_HEX.test(sha256)) throw new LbotError('internal', `not a sha256 hex digest: ${JSON.stringify(sha256.slice(0, 80))}`);
    return path.join(this.root, sha256.slice(0, 2), sha256.slice(2));
  }

  /**
   * Stores `content` under its sha256 and returns the digest. Existing content is not rewritten
   * (dedup). A new blob is written to a temp file in its final directory, fsynced, renamed into
   * place and the directory fsynced, so a crash leaves either no file or the whole file.
   */
  put(content: Buffer): string {
    const sha256 = createHash('sha256').update(content).digest('hex');
    const file = this.pathOf(sha256);
    if (existsSync(file)) return sha256;
    const dir = path.dirname(file);
    try {
      mkdirSync(dir, { recursive: true });
      writePrivateFile(file, content);
      syncDir(dir);
    } catch (err) {
      throw storeUnavailable(file, `cannot write artifact bytes: ${reasonOf(err)}`, err);
    }
    return sha256;
  }

  /** Reads up to `length` bytes from `offset`; null when the blob file is missing. */
  read(sha256: string, offset: number, length: number): BlobRange | null {
    const file = this.pathOf(sha256);
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch (err) {
      if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return null;
      throw storeUnavailable(file, `cannot read artifact bytes: ${reasonOf(err)}`, err);
    }
    try {
      const total = fstatSync(fd).size;
      const want = Math.max(0, Math.min(length, total - offset));
      const bytes = Buffer.alloc(want);
      let got = 0;
      while (got < want) {
        const n = readSync(fd, bytes, got, want - got, offset + got);
        if (n === 0) break;
        got += n;
      }
      return { bytes: got === want ? bytes : bytes.subarray(0, got), total };
    } finally {
      closeSync(fd);
    }
  }
}

/** fsync of a directory makes a rename durable; some filesystems refuse it, which only loses that guarantee. */
function syncDir(dir: string): void {
  let fd: number | null = null;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // best effort (see above)
  } finally {
    if (fd !== null) closeSync(fd);
  }
}
