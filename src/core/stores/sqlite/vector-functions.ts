// Vector distance inside SQLite: sqlite-vec's native `vec_distance_cosine` when its binary loads, else the same
// function in JavaScript (slower, same results), so a platform without the binary still answers hybrid queries.
import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';
import { z } from 'zod';

export type VectorEngine = 'sqlite-vec' | 'javascript';

/** Cosine distance (1 − cosine similarity) of two float32 blobs; null when either is missing or the lengths differ. */
export function cosineDistance(a: unknown, b: unknown): number | null {
  if (!Buffer.isBuffer(a) || !Buffer.isBuffer(b) || a.length !== b.length || a.length % 4 !== 0) return null;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i += 4) {
    const x = a.readFloatLE(i);
    const y = b.readFloatLE(i);
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 1 : 1 - dot / Math.sqrt(na * nb);
}

/** One bit per dimension of a float32 blob, set when the value is positive (sqlite-vec's binary quantization). */
export function signBits(blob: Buffer): Buffer {
  const dims = Math.floor(blob.length / 4);
  const out = Buffer.alloc(Math.ceil(dims / 8));
  for (let i = 0; i < dims; i++) if (blob.readFloatLE(i * 4) > 0) out[i >> 3] = (out[i >> 3] ?? 0) | (1 << (i & 7));
  return out;
}

const POPCOUNT = Uint8Array.from({ length: 256 }, (_, i) => {
  let n = 0;
  for (let v = i; v; v >>= 1) n += v & 1;
  return n;
});

/** Bits that differ between two bit blobs of the same length; null otherwise. */
export function hammingDistance(a: unknown, b: unknown): number | null {
  if (!Buffer.isBuffer(a) || !Buffer.isBuffer(b) || a.length !== b.length) return null;
  let n = 0;
  for (let i = 0; i < a.length; i++) n += POPCOUNT[(a[i] ?? 0) ^ (b[i] ?? 0)] ?? 0;
  return n;
}

const requireCjs = createRequire(import.meta.url);
const SqliteVecSchema = z.object({ load: z.custom<(db: Database.Database) => void>((v) => typeof v === 'function') });
const installed = new WeakMap<Database.Database, VectorEngine>();

/**
 * Makes `vec_distance_cosine(a, b)`, `vec_distance_hamming(a, b)` and `vec_bit(blob)` callable on `db` (once per
 * connection); says which implementation answers. Called before a vector query, not when the database opens:
 * importing sqlite-vec and loading its binary take a few milliseconds of every start, and most processes (a
 * `lbot run` of a runner that never searches a knowledge base) never query a vector.
 */
export function installVectorFunctions(db: Database.Database): VectorEngine {
  const known = installed.get(db);
  if (known) return known;
  const engine = loadVectorFunctions(db);
  installed.set(db, engine);
  return engine;
}

function loadVectorFunctions(db: Database.Database): VectorEngine {
  if (process.env.LBOT_SQLITE_VEC !== 'off') {
    try {
      SqliteVecSchema.parse(requireCjs('sqlite-vec')).load(db);
      return 'sqlite-vec';
    } catch {
      // No binary for this platform, or extension loading is disabled: fall through to JavaScript.
    }
  }
  db.function('vec_distance_cosine', { deterministic: true }, cosineDistance);
  db.function('vec_distance_hamming', { deterministic: true }, hammingDistance);
  db.function('vec_bit', { deterministic: true }, (blob: unknown) => (Buffer.isBuffer(blob) ? blob : null));
  return 'javascript';
}

/** A vector as sqlite-vec stores it: float32, little-endian. */
export function vectorBlob(vec: readonly number[]): Buffer {
  const buf = Buffer.alloc(vec.length * 4);
  vec.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf;
}
