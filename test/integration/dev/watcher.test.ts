// The dev watcher on real files: a burst of changes arrives as one debounced batch, and ignored paths
// (node_modules, .git, build output the plugin does not run from) never trigger one.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createWatcher, ignoreRule, type Watcher } from '../../../src/runtime/dev/watcher.js';

let root: string;
let watcher: Watcher | undefined;

afterEach(async () => {
  await watcher?.close();
  await rm(root, { recursive: true, force: true });
});

function batches() {
  const seen: string[][] = [];
  let notify: (() => void) | null = null;
  return {
    seen,
    onBatch: (paths: string[]) => {
      seen.push([...paths].sort());
      notify?.();
    },
    next: (timeoutMs = 10_000) =>
      new Promise<string[]>((resolve, reject) => {
        const count = seen.length;
        const timer = setTimeout(() => reject(new Error('no batch')), timeoutMs);
        notify = () => {
          if (seen.length > count) {
            clearTimeout(timer);
            notify = null;
            resolve(seen.at(-1) ?? []);
          }
        };
      }),
  };
}

describe('dev watcher', () => {
  it('debounces a burst into one batch and skips ignored paths', async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'lbot-watch-'));
    const plugin = path.join(root, 'hot');
    await mkdir(path.join(plugin, 'node_modules', 'dep'), { recursive: true });
    await mkdir(path.join(plugin, 'dist'), { recursive: true });
    await mkdir(path.join(plugin, 'components'), { recursive: true });
    const b = batches();
    watcher = await createWatcher({
      root,
      debounceMs: 80,
      ignore: ignoreRule({ root, extraIgnored: [], pluginDirOf: (p) => (p.startsWith(`${plugin}`) ? plugin : null), executedDir: () => null }),
      onBatch: b.onBatch,
      onError: (err) => {
        throw err;
      },
    });
    let next = b.next();
    await writeFile(path.join(plugin, 'main.js'), 'a');
    await writeFile(path.join(plugin, 'manifest.yaml'), 'b');
    await writeFile(path.join(plugin, 'components', 'default.yaml'), 'c');
    expect(await next).toEqual([path.join(plugin, 'components', 'default.yaml'), path.join(plugin, 'main.js'), path.join(plugin, 'manifest.yaml')]);

    next = b.next();
    await writeFile(path.join(plugin, 'node_modules', 'dep', 'index.js'), 'x');
    await writeFile(path.join(plugin, 'dist', 'main.js'), 'x');
    await writeFile(path.join(plugin, 'main.js~'), 'x');
    await writeFile(path.join(plugin, 'main.js'), 'sentinel');
    expect(await next).toEqual([path.join(plugin, 'main.js')]);
    expect(b.seen).toHaveLength(2);
  });
});
