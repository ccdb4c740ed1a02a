// A base's vectors held in memory in two compact forms (docs/knowledge.md, Speed): one sign bit a dimension,
// scanned by Hamming distance over packed 32-bit words, and one signed byte a dimension, which ranks the
// Hamming candidates by an approximate cosine before the few best are ranked exactly from SQLite.

/** Set bits of a 32-bit word (SWAR popcount). */
function popcount32(v: number): number {
  let x = v - ((v >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/** Packs a bit blob into `words` little-endian 32-bit words (zero-padded). */
function packInto(out: Uint32Array, at: number, bits: Uint8Array, words: number): void {
  for (let w = 0; w < words; w++) {
    let v = 0;
    for (let b = 0; b < 4; b++) v |= (bits[w * 4 + b] ?? 0) << (8 * b);
    out[at + w] = v >>> 0;
  }
}

/** Scales a float32 blob into signed bytes (largest magnitude → ±127); returns the bytes' Euclidean norm. */
function quantizeInto(out: Int8Array, at: number, blob: Uint8Array, dims: number): number {
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  let max = 0;
  for (let i = 0; i < dims; i++) max = Math.max(max, Math.abs(view.getFloat32(i * 4, true)));
  let norm = 0;
  for (let i = 0; i < dims; i++) {
    const q = max === 0 ? 0 : Math.round((127 * view.getFloat32(i * 4, true)) / max);
    out[at + i] = q;
    norm += q * q;
  }
  return Math.sqrt(norm);
}

/** One stored vector: its chunk id, sign bits and float32 blob. */
export type IndexedVector = { id: number; bits: Uint8Array; embedding: Uint8Array };

/** An immutable snapshot of one base's vectors of one length. */
export class VectorIndex {
  readonly #ids: Float64Array;
  readonly #words: Uint32Array;
  readonly #codes: Int8Array;
  readonly #norms: Float32Array;
  readonly #perVector: number;
  readonly #dims: number;

  private constructor(ids: Float64Array, words: Uint32Array, codes: Int8Array, norms: Float32Array, perVector: number, dims: number) {
    this.#ids = ids;
    this.#words = words;
    this.#codes = codes;
    this.#norms = norms;
    this.#perVector = perVector;
    this.#dims = dims;
  }

  /** Builds the index from at most `count` vectors of `dims` dimensions (others are skipped). */
  static build(rows: Iterable<IndexedVector>, count: number, dims: number): VectorIndex {
    const bitBytes = Math.ceil(dims / 8);
    const perVector = Math.ceil(bitBytes / 4);
    const ids = new Float64Array(count);
    const words = new Uint32Array(count * perVector);
    const codes = new Int8Array(count * dims);
    const norms = new Float32Array(count);
    let n = 0;
    for (const r of rows) {
      if (n >= count) break;
      if (r.bits.length !== bitBytes || r.embedding.length !== dims * 4) continue;
      ids[n] = r.id;
      packInto(words, n * perVector, r.bits, perVector);
      norms[n] = quantizeInto(codes, n * dims, r.embedding, dims);
      n++;
    }
    return new VectorIndex(ids.subarray(0, n), words.subarray(0, n * perVector), codes.subarray(0, n * dims), norms.subarray(0, n), perVector, dims);
  }

  get size(): number {
    return this.#ids.length;
  }

  /** Bytes held (for the cache's budget). */
  get bytes(): number {
    return this.#ids.byteLength + this.#words.byteLength + this.#codes.byteLength + this.#norms.byteLength;
  }

  /** Positions of the `k` vectors nearest `bits` by Hamming distance (ties broken by position); all when k ≥ size. */
  #nearestByBits(bits: Uint8Array, k: number): number[] {
    const n = this.size;
    const per = this.#perVector;
    const query = new Uint32Array(per);
    packInto(query, 0, bits, per);
    const dist = new Uint16Array(n);
    const histogram = new Uint32Array(per * 32 + 1);
    const words = this.#words;
    for (let i = 0, at = 0; i < n; i++, at += per) {
      let d = 0;
      for (let w = 0; w < per; w++) d += popcount32((words[at + w] ?? 0) ^ (query[w] ?? 0));
      dist[i] = d;
      histogram[d] = (histogram[d] ?? 0) + 1;
    }
    // The distance below which fewer than k vectors lie; those at exactly it fill the remaining places.
    let cutoff = 0;
    let below = 0;
    while (cutoff < histogram.length && below + (histogram[cutoff] ?? 0) < k) below += histogram[cutoff++] ?? 0;
    let ties = k - below;
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const d = dist[i] ?? 0;
      if (d < cutoff || (d === cutoff && ties-- > 0)) out.push(i);
    }
    return out;
  }

  /**
   * Chunk ids of the `keep` best of the `scan` vectors nearest by sign bits, ranked by the signed-byte cosine
   * (best first). `query` is the float32 blob, `bits` its sign bits.
   */
  nearest(query: Uint8Array, bits: Uint8Array, scan: number, keep: number): number[] {
    const dims = this.#dims;
    const q = new Int8Array(dims);
    const qNorm = quantizeInto(q, 0, query, dims);
    const codes = this.#codes;
    const scored = this.#nearestByBits(bits, scan).map((pos) => {
      let dot = 0;
      for (let i = 0, at = pos * dims; i < dims; i++) dot += (codes[at + i] ?? 0) * (q[i] ?? 0);
      const norm = (this.#norms[pos] ?? 0) * qNorm;
      return { pos, cos: norm === 0 ? 0 : dot / norm };
    });
    scored.sort((a, b) => b.cos - a.cos || a.pos - b.pos);
    return scored.slice(0, keep).map((s) => this.#ids[s.pos] ?? 0);
  }
}
