// Contract suite for ArtifactStore (runner-protocol.md §8.3; AC-056, AC-057, AC-059, AC-219): every implementation runs it.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ArtifactRegister, ArtifactStore } from '../../src/core/stores/types.js';
import type { Async } from '../../src/core/stores/async.js';
import { expectLbotError, type OpenStore } from './harness.js';

export function artifactRow(over: Partial<ArtifactRegister> = {}): ArtifactRegister {
  return {
    artifact_id: 'art-1',
    artifact_type: 'file',
    mime_type: 'text/plain',
    name: 'r.txt',
    size_bytes: null,
    sha256: null,
    source: 'runner',
    conversation_id: 'c1',
    run_id: 'run-1',
    runner_id: 'plugin:acme/echo/default',
    bot_id: 'bot-1',
    workspace_id: 'ws-1',
    expires_at: null,
    metadata: { note: 'x' },
    ...over,
  };
}

const MiB = 1_048_576;

export function artifactStoreContract(name: string, open: OpenStore<{ artifacts: Async<ArtifactStore> }>): void {
  describe(`ArtifactStore contract (${name})`, () => {
    let s: Awaited<ReturnType<typeof open>>;
    beforeEach(async () => {
      s = await open();
    });
    afterEach(() => s.close());

    it('AC-057: stores content with sha256 and size taken from the bytes', async () => {
      const r = await s.artifacts.register(artifactRow({ content: Buffer.from('hello'), size_bytes: 999, sha256: 'bogus' }));
      expect(r).toMatchObject({
        artifact_id: 'art-1',
        artifact_type: 'file',
        mime_type: 'text/plain',
        name: 'r.txt',
        size_bytes: 5,
        sha256: createHash('sha256').update('hello').digest('hex'),
        source: 'runner',
        conversation_id: 'c1',
        run_id: 'run-1',
        runner_id: 'plugin:acme/echo/default',
        expires_at: null,
        metadata: { note: 'x' },
        storage_type: 'binary_storage',
        bot_id: 'bot-1',
        workspace_id: 'ws-1',
      });
      expect(typeof r.created_at).toBe('number');
      expect(await s.artifacts.get('art-1')).toEqual(r);
      expect(await s.artifacts.get('nope')).toBeNull();
      const read = await s.artifacts.read(r, 0, null);
      expect(read).toEqual({
        artifact_id: 'art-1',
        mime_type: 'text/plain',
        size_bytes: 5,
        offset: 0,
        length: 5,
        content_base64: 'aGVsbG8=',
        file_key: null,
        has_more: false,
      });
    });

    it('AC-056: URL, platform and metadata-only records are references without bytes', async () => {
      const url = await s.artifacts.register(artifactRow({ artifact_id: 'a2', storage_type: 'url', storage_key: 'https://example.invalid/f.pdf' }));
      const plat = await s.artifacts.register(artifactRow({ artifact_id: 'a3', storage_type: 'platform_ref', storage_key: 'plat-77' }));
      const meta = await s.artifacts.register(artifactRow({ artifact_id: 'a4', size_bytes: 12 }));
      expect(url.storage_type).toBe('url');
      expect(plat.storage_type).toBe('platform_ref');
      expect(meta.storage_type).toBe('metadata_only');
      expect(meta.size_bytes).toBe(12);
      expect(await s.artifacts.read(url, 0, null)).toEqual({
        artifact_id: 'a2',
        mime_type: 'text/plain',
        size_bytes: null,
        offset: 0,
        length: null,
        content_base64: null,
        file_key: 'https://example.invalid/f.pdf',
        has_more: false,
      });
      expect((await s.artifacts.read(plat, 0, 10)).file_key).toBe('plat-77');
      expect((await s.artifacts.read(meta, 0, null)).file_key).toBeNull();
    });

    it('refuses a duplicate artifact id with invalid_argument', async () => {
      const first = await s.artifacts.register(artifactRow({ content: Buffer.from('a') }));
      await expectLbotError(() => s.artifacts.register(artifactRow({ content: Buffer.from('b') })), 'invalid_argument');
      await expectLbotError(() => s.artifacts.register(artifactRow({ storage_type: 'url', storage_key: 'https://x.invalid' })), 'invalid_argument');
      expect(await s.artifacts.get('art-1')).toEqual(first);
      expect((await s.artifacts.read(first, 0, null)).content_base64).toBe(Buffer.from('a').toString('base64'));
    });

    it('AC-059: range reads of a 3 MiB artifact: default 1 MiB, 10 MiB cap, end of file, exact bytes', async () => {
      const bytes = createHash('sha512').update('seed').digest();
      const content = Buffer.alloc(3 * MiB);
      for (let i = 0; i < content.length; i++) content[i] = (bytes[i % bytes.length] ?? 0) ^ (i >> 10);
      const r = await s.artifacts.register(artifactRow({ content }));
      const first = await s.artifacts.read(r, 0, null);
      expect(first.length).toBe(MiB);
      expect(first.has_more).toBe(true);
      const rest = await s.artifacts.read(r, MiB, 52_428_800);
      expect(rest.length).toBe(2 * MiB);
      expect(rest.has_more).toBe(false);
      const joined = Buffer.concat([Buffer.from(first.content_base64 ?? '', 'base64'), Buffer.from(rest.content_base64 ?? '', 'base64')]);
      expect(createHash('sha256').update(joined).digest('hex')).toBe(r.sha256);
      const end = await s.artifacts.read(r, 3 * MiB, null);
      expect(end).toMatchObject({ length: 0, content_base64: '', has_more: false, offset: 3 * MiB });
      expect(await s.artifacts.read(r, 10, 5)).toMatchObject({ offset: 10, length: 5, has_more: true });
      expect(Buffer.from((await s.artifacts.read(r, 10, 5)).content_base64 ?? '', 'base64').equals(content.subarray(10, 15))).toBe(true);
    });

    it('AC-059: offset < 0, a length <= 0 and non-integers are invalid_argument', async () => {
      const r = await s.artifacts.register(artifactRow({ content: Buffer.from('abc') }));
      for (const [offset, length] of [
        [-1, null],
        [0, 0],
        [0, -5],
        [1.5, null],
        [0, 2.5],
        [Number.NaN, null],
      ] as const) {
        const err = await expectLbotError(() => s.artifacts.read(r, offset, length), 'invalid_argument');
        expect(err.details['reason']).toBe('bad_range');
      }
    });

    it('AC-219: a hostile name stays an inert string', async () => {
      const hostile = '../../../../tmp/lbot-pwn-contract.txt';
      const r = await s.artifacts.register(artifactRow({ name: hostile, content: Buffer.from('pwn') }));
      expect(existsSync('/tmp/lbot-pwn-contract.txt')).toBe(false);
      expect((await s.artifacts.get(r.artifact_id))?.name).toBe(hostile);
      expect(Buffer.from((await s.artifacts.read(r, 0, null)).content_base64 ?? '', 'base64').toString()).toBe('pwn');
    });

    it('lists by run or conversation, oldest first; a limit keeps the newest', async () => {
      await s.artifacts.register(artifactRow({ artifact_id: 'x1', storage_type: 'metadata_only' }));
      await s.artifacts.register(artifactRow({ artifact_id: 'x2', run_id: 'run-2', storage_type: 'metadata_only' }));
      await s.artifacts.register(artifactRow({ artifact_id: 'x3', conversation_id: 'c2', storage_type: 'metadata_only' }));
      expect((await s.artifacts.list({})).map((a) => a.artifact_id)).toEqual(['x1', 'x2', 'x3']);
      expect((await s.artifacts.list({ run_id: 'run-1' })).map((a) => a.artifact_id)).toEqual(['x1', 'x3']);
      expect((await s.artifacts.list({ conversation_id: 'c1' })).map((a) => a.artifact_id)).toEqual(['x1', 'x2']);
      expect((await s.artifacts.list({ limit: 2 })).map((a) => a.artifact_id)).toEqual(['x2', 'x3']);
    });
  });
}
