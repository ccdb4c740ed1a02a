// Upstream body caps (bounded-fetch.ts) applied to stub responses, as the transport's fallback to the global
// fetch applies them: a plain body within its declared length passes untouched, a compressed one is still
// counted (it can inflate past its length), a declared length over the cap is refused before a byte is read.
// The caps over real sockets are in test/integration/models.
import { describe, expect, it } from 'vitest';
import { bodyCheck, checkedResponse } from '../../../src/runtime/models/bounded-fetch.js';

const limits = { bodyBytes: 64, eventBytes: 64 };

const check = bodyCheck('m', limits);
const stub = (body: string, headers: Record<string, string>) => new Response(body, { headers });

describe('checkedResponse', () => {
  it('passes a plain body within its declared Content-Length through as it is', async () => {
    const body = 'x'.repeat(40);
    const upstream = new Response(body, { headers: { 'content-length': '40' } });
    const res = await checkedResponse(upstream, check);
    expect(res).toBe(upstream);
    expect(await res.text()).toBe(body);
  });

  it('counts a compressed body whatever it declares: past the cap it fails with payload_too_large', async () => {
    const res = await checkedResponse(stub('x'.repeat(200), { 'content-length': '20', 'content-encoding': 'gzip' }), check);
    await expect(res.text()).rejects.toMatchObject({ code: 'payload_too_large', reason: 'upstream_body_too_large' });
  });

  it('counts a body with a malformed Content-Length, and refuses a declared one over the cap before reading', async () => {
    const malformed = await checkedResponse(stub('x'.repeat(200), { 'content-length': '' }), check);
    await expect(malformed.text()).rejects.toMatchObject({ code: 'payload_too_large' });
    const declared = await checkedResponse(stub('x'.repeat(200), { 'content-length': '200' }), check);
    await expect(declared.text()).rejects.toMatchObject({ code: 'payload_too_large' });
  });
});
