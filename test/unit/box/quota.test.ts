// Quota policy: usage by apparent size without following symlinks, limits and the error (box.md §9.4; AC-105, AC-106).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  fileSizeLimitBytes,
  measureUsage,
  quotaExceeded,
  quotaFilesystemBytes,
  quotaLimitBytes,
  QUOTA_MARGIN_BYTES,
  MAX_FILE_BYTES,
} from '../../../src/core/box/quota.js';

describe('quota', () => {
  it('sums apparent sizes recursively and counts a symlink by its own size (AC-106)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'lbot-quota-'));
    const big = path.join(os.tmpdir(), `lbot-quota-big-${process.pid}`);
    writeFileSync(big, Buffer.alloc(3 * 1024 * 1024));
    mkdirSync(path.join(dir, 'sub'));
    writeFileSync(path.join(dir, 'sub', 'f'), 'hello');
    symlinkSync(big, path.join(dir, 'link'));
    try {
      const used = await measureUsage([dir]);
      expect(used).toBeLessThan(1024 * 1024);
      expect(used).toBeGreaterThanOrEqual(5 + big.length);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(big, { force: true });
    }
  });

  it('ignores missing directories', async () => {
    expect(await measureUsage(['/nonexistent-lbot-quota'])).toBe(0);
  });

  it('derives the limit, the filesystem size and the per-file cap', () => {
    expect(quotaLimitBytes(1)).toBe(1024 * 1024);
    expect(quotaFilesystemBytes(100)).toBe(100 * 1024 * 1024 + QUOTA_MARGIN_BYTES);
    expect(fileSizeLimitBytes(0)).toBe(MAX_FILE_BYTES);
    expect(fileSizeLimitBytes(1)).toBe(1024 * 1024 + QUOTA_MARGIN_BYTES);
    expect(fileSizeLimitBytes(10_000)).toBe(MAX_FILE_BYTES);
  });

  it('reports phase, used and limit bytes in the error', () => {
    const e = quotaExceeded('after', 3_000_000, 1_048_576, '/ws', 's1');
    expect(e.code).toBe('box.quota_exceeded');
    expect(e.details).toMatchObject({ phase: 'after', used_bytes: 3_000_000, limit_bytes: 1_048_576 });
    expect(e.message).toContain('after execution');
  });
});
