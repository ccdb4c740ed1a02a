// A run leaves no timer behind: its deadline and its reply grace are cancelled when it ends. A timer left to
// fire holds what it closes over (the run, its promises) until then: 300 s of every run's deadline under serve.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src/core/config.js';
import { createHost } from '../../../src/core/host/host.js';
import type { Clock, PluginLauncher } from '../../../src/core/host/ports.js';
import { asAsyncStores } from '../../../src/core/stores/async.js';
import { openSqliteStores } from '../../../src/core/stores/sqlite/open.js';
import { createModelProvider } from '../../../src/runtime/models/providers.js';
import { binding, descriptor, envelope, scriptedConnection, scriptedCatalog } from './fixtures.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The system clock, counting the timers it was asked for and those still pending. */
function countingClock() {
  const pending = new Set<NodeJS.Timeout>();
  const asked: number[] = [];
  const clock: Clock = {
    now: () => Date.now(),
    after(ms, fire) {
      asked.push(ms);
      const timer = setTimeout(() => {
        pending.delete(timer);
        fire();
      }, ms);
      pending.add(timer);
      return () => {
        clearTimeout(timer);
        pending.delete(timer);
      };
    },
  };
  return { clock, pending, asked };
}

function hostWith(clock: Clock, reply: 'completed' | 'results-only') {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lbot-timers-'));
  dirs.push(dataDir);
  const stores = openSqliteStores(dataDir);
  // 'results-only': the results end the run, but the reply to `run` never comes, so the host waits out the grace.
  const connection = scriptedConnection((_params, onResult) => {
    onResult({ type: 'message.completed', data: { message: { role: 'assistant', content: 'done' } } });
    onResult({ type: 'run.completed', data: {} });
    return reply === 'completed' ? Promise.resolve({ status: 'completed' }) : new Promise(() => undefined);
  });
  const launcher: PluginLauncher = { start: async () => connection };
  const d = descriptor();
  const catalog = scriptedCatalog(d);
  const config = ConfigSchema.parse({ runs: { cancel_grace_ms: 50 } });
  const host = createHost({
    stores: asAsyncStores(stores),
    launcher,
    catalog: async () => catalog,
    config,
    models: createModelProvider([]),
    clock,
    version: 'test',
    warn: () => undefined,
  });
  return {
    run: () => host.run({ event: envelope(), binding: binding() }),
    close: async () => {
      await host.close();
      stores.close();
    },
  };
}

it('a completed run cancels its deadline and its reply grace', async () => {
  const { clock, pending, asked } = countingClock();
  const h = hostWith(clock, 'completed');
  try {
    const outcome = await h.run();
    expect(outcome.status).toBe('completed');
    // The 300 s default deadline and the 50 ms grace were both set, and neither is left.
    expect(asked.some((ms) => ms > 299_000)).toBe(true);
    expect(asked).toContain(50);
    expect(pending.size).toBe(0);
  } finally {
    await h.close();
  }
});

it('a run whose reply never comes ends after the grace with no timer left', async () => {
  const { clock, pending, asked } = countingClock();
  const h = hostWith(clock, 'results-only');
  try {
    const outcome = await h.run();
    expect(outcome.status).toBe('completed');
    expect(asked).toContain(50);
    expect(pending.size).toBe(0);
  } finally {
    await h.close();
  }
});
