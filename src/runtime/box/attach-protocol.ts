// Framing of the managed-process relay socket: [type:1][length:4 BE][payload], 16 MiB cap per frame.
import { timingSafeEqual, createHash } from 'node:crypto';
import { z } from 'zod';

export const FRAME = { hello: 1, accept: 2, data: 3, eof: 4, exit: 5 } as const;
export type FrameType = (typeof FRAME)[keyof typeof FRAME];
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

export const HelloSchema = z.strictObject({ token: z.string(), process_id: z.string().optional() });
export const AcceptSchema = z.union([
  z.strictObject({ ok: z.literal(true) }),
  z.strictObject({ ok: z.literal(false), error: z.strictObject({ code: z.string(), message: z.string() }) }),
]);
export type Accept = z.infer<typeof AcceptSchema>;
export const ExitSchema = z.strictObject({ exit_code: z.number().nullable() });

export function encodeFrame(type: FrameType, payload: Buffer | string = Buffer.alloc(0)): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  const head = Buffer.alloc(5);
  head.writeUInt8(type, 0);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

export type Frame = { type: number; payload: Buffer };

/** Incremental decoder: feed chunks, get whole frames; throws on an oversized frame. */
export class FrameDecoder {
  #buf: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Frame[] {
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    const out: Frame[] = [];
    while (this.#buf.length >= 5) {
      const len = this.#buf.readUInt32BE(1);
      if (len > MAX_FRAME_BYTES) throw new Error(`relay frame of ${len} bytes exceeds the ${MAX_FRAME_BYTES}-byte limit`);
      if (this.#buf.length < 5 + len) break;
      out.push({ type: this.#buf.readUInt8(0), payload: this.#buf.subarray(5, 5 + len) });
      this.#buf = this.#buf.subarray(5 + len);
    }
    return out;
  }
}

/** Constant-time token comparison (hashing first makes the lengths equal). */
export function tokensEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}
