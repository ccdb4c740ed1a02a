// The runtime SkillFetcher against a local HTTP server and local git remotes (no outside network).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LbotError } from '../../src/core/errors.js';
import { createSkillFetcher } from '../../src/runtime/skills/fetcher.js';
import { tempDir } from './skill-zip.js';

async function serve(handler: (url: string) => { status: number; body: Buffer }): Promise<string> {
  const server: Server = createServer((req, res) => {
    const { status, body } = handler(req.url ?? '/');
    res.writeHead(status, { 'content-type': 'application/zip' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address: AddressInfo | string | null = server.address();
  if (address === null || typeof address === 'string') throw new Error('the test server has no TCP address');
  return `http://127.0.0.1:${address.port}`;
}

async function refusal(p: Promise<unknown>): Promise<LbotError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof LbotError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('skill fetcher', () => {
  it('downloads within the byte budget, stops over it, and reports HTTP errors as skill.invalid_source', async () => {
    const dir = await tempDir();
    const payload = Buffer.alloc(64 * 1024, 1);
    const base = await serve((url) => (url === '/ok.zip' ? { status: 200, body: payload } : { status: 404, body: Buffer.from('no') }));
    const fetcher = createSkillFetcher();
    await fetcher.download({ url: `${base}/ok.zip`, dest: path.join(dir, 'a.zip'), maxBytes: payload.length });
    expect(await readFile(path.join(dir, 'a.zip'))).toEqual(payload);
    const big = await refusal(fetcher.download({ url: `${base}/ok.zip`, dest: path.join(dir, 'b.zip'), maxBytes: 1024 }));
    expect(big.code).toBe('skill.too_large');
    expect(existsSync(path.join(dir, 'b.zip'))).toBe(false);
    const missing = await refusal(fetcher.download({ url: `${base}/missing.zip`, dest: path.join(dir, 'c.zip'), maxBytes: 1024 }));
    expect(missing.code).toBe('skill.invalid_source');
    expect(missing.message).toContain('404');
  });

  it('a cancelled clone reports cancelled and a bad ref reports skill.invalid_source', async () => {
    const dir = await tempDir();
    const fetcher = createSkillFetcher();
    const controller = new AbortController();
    controller.abort();
    const budget = { maxGitBytes: 1024 * 1024, maxTotalBytes: 2 * 1024 * 1024 };
    expect(
      (await refusal(fetcher.gitClone({ url: path.join(dir, 'none.git'), ref: null, dest: path.join(dir, 'x'), ...budget, signal: controller.signal }))).code,
    ).toBe('cancelled');
    const bad = await refusal(fetcher.gitClone({ url: path.join(dir, 'none.git'), ref: 'main', dest: path.join(dir, 'y'), ...budget }));
    expect(bad.code).toBe('skill.invalid_source');
    expect(bad.hint).toContain('ref');
  });
});
