// The config follower of serve: one watcher on the data dir; an edit by another process reaches the
// subscribers once, an edit that changes nothing reaches nobody, and a broken edit is reported once while the
// last good config stays in effect.
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../../../src/core/config.js';
import { openConfigFile } from '../../../src/core/stores/config-file.js';
import { followConfig, type ConfigFollower } from '../../../src/runtime/config-follower.js';

const open: ConfigFollower[] = [];
afterEach(() => {
  for (const f of open.splice(0)) f.close();
});

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('followConfig', () => {
  it('applies edits made by another writer, skips no-op rewrites, and keeps the last good config on a broken edit', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lbot-follow-'));
    const file = path.join(dataDir, 'lbot.config.json');
    writeFileSync(file, JSON.stringify({ models: [] }), { mode: 0o600 });
    const configFile = openConfigFile(dataDir, {});
    const warnings: string[] = [];
    const seen: Config[] = [];
    const follower = followConfig({ dataDir, configFile, warn: (m) => warnings.push(m), debounceMs: 20 });
    open.push(follower);
    follower.subscribe((c) => seen.push(c));

    writeFileSync(file, JSON.stringify({ models: [{ id: 'm1', provider: 'fake' }] }));
    await until(() => seen.length === 1);
    expect(seen.map((c) => c.models.map((m) => m.id))).toEqual([['m1']]);
    expect(follower.current().models.map((m) => m.id)).toEqual(['m1']);

    writeFileSync(file, JSON.stringify({ models: [{ id: 'm1', provider: 'fake' }] }, null, 4));
    writeFileSync(file, '{"models": [');
    await until(() => warnings.length === 1);
    writeFileSync(file, '{"models": [');
    await new Promise((r) => setTimeout(r, 100));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('the last good config stays in effect');
    expect(follower.current().models.map((m) => m.id)).toEqual(['m1']);
    expect(seen).toHaveLength(1);

    writeFileSync(file, JSON.stringify({ models: [{ id: 'm2', provider: 'fake' }] }));
    await until(() => seen.length === 2);
    expect(follower.current().models.map((m) => m.id)).toEqual(['m2']);
  });
});
