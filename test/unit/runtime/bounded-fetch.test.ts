// Upstream body caps (bounded-fetch.ts) on stub responses: a plain body within its declared length passes
// untouched, a compressed one is still counted (it can inflate past its length), a declared length over the
// cap is refused before a byte is read. The caps over real sockets are in test/integration/models.
import { describe, expect, it } from 'vitest';
import { boundedFetch } from '../../../src/runtime/models/bounded-fetch.js';

const limits = { bodyBytes: 64, eventBytes: 64 };

const stub =
  (body: string, headers: Record<string, string>): typeof fetch =>
  () =>
    Promise.resolve(new Response(body, { headers }));

describe('boundedFetch', () => {
  it('passes a plain body within its declared Content-Length through as it is', async () => {
    const body = 'x'.repeat(40);
    const upstream = new Response(body, { headers: { 'content-length': '40' } });
    const res = await boundedFetch('m', limits, () => Promise.resolve(upstream))('http://upstream.test/');
    expect(res).toBe(upstream);
    expect(await res.text()).toBe(body);
  });

  it('counts a compressed body whatever it declares: past the cap it fails with payload_too_large', async () => {
    const res = await boundedFetch('m', limits, stub('x'.repeat(200), { 'content-length': '20', 'content-encoding': 'gzip' }))('http://upstream.test/');
    await expect(res.text()).rejects.toMatchObject({ code: 'payload_too_large', reason: 'upstream_body_too_large' });
  });

  it('counts a body with a malformed Content-Length, and refuses a declared one over the cap before reading', async () => {
    const malformed = await boundedFetch('m', limits, stub('x'.repeat(200), { 'content-length': '' }))('http://upstream.test/');
    await expect(malformed.text()).rejects.toMatchObject({ code: 'payload_too_large' });
    const declared = await boundedFetch('m', limits, stub('x'.repeat(200), { 'content-length': '200' }))('http://upstream.test/');
    await expect(declared.text()).rejects.toMatchObject({ code: 'payload_too_large' });
  });
});
