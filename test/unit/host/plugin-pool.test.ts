// The plugin pool with a launcher fake: one process per plugin and env (the env handed over as given),
// replacement of a dead process with crash-loop backoff, reload, and drain on the last run's release.
import { describe, expect, it } from 'vitest';
import { PluginPool } from '../../../src/core/host/plugin-pool.js';
import type { Clock, ConnectionFailure, PluginConnection, PluginLauncher, PluginSpec, RunnerCatalog } from '../../../src/core/host/ports.js';
import { LbotError } from '../../../src/core/errors.js';

type FakeConn = PluginConnection & { spec: PluginSpec; closed: boolean; accepting: boolean; die(): void };

function fakeLauncher(opts: { failNext?: () => boolean } = {}) {
  const started: FakeConn[] = [];
  const launcher: PluginLauncher = {
    async start(spec) {
      if (opts.failNext?.()) throw new LbotError('runner.start_failed', 'broken build');
      let exit!: (f: ConnectionFailure | null) => void;
      const exited = new Promise<ConnectionFailure | null>((resolve) => (exit = resolve));
      const conn: FakeConn = {
        spec,
        closed: false,
        accepting: true,
        identity: spec.identity,
        pgid: null,
        run: async () => ({ status: 'completed' }),
        cancel: () => undefined,
        activeRuns: () => [],
        stderrTail: () => '',
        async close() {
          conn.closed = true;
          exit(null);
        },
        kill: async () => undefined,
        exited,
        die: () => exit({ code: 'runner.crashed', message: 'gone' }),
      };
      started.push(conn);
      return conn;
    },
  };
  return { launcher, started };
}

/** A clock whose timeouts fire when the test advances it. */
function manualClock() {
  let now = 0;
  const timers: Array<{ at: number; fire: () => void }> = [];
  const clock: Clock = {
    now: () => now,
    after(ms, fire) {
      const timer = { at: now + ms, fire };
      timers.push(timer);
      return () => {
        const i = timers.indexOf(timer);
        if (i >= 0) timers.splice(i, 1);
      };
    },
  };
  return {
    clock,
    advance(ms: number) {
      now += ms;
      const due = timers.filter((t) => t.at <= now);
      timers.splice(0, timers.length, ...timers.filter((t) => t.at > now));
      for (const t of due) t.fire();
    },
  };
}

const plugin = { identity: 'acme/p', dir: '/plugins/p', execution: { node: { path: 'main.js' } } } as const;
const catalog: RunnerCatalog = { runners: [], plugins: new Map([['acme/p', plugin]]), warnings: [] };
const flush = () => new Promise((r) => setImmediate(r));

function pool(launcher: PluginLauncher, clock: Clock = manualClock().clock, warnings: string[] = []) {
  return new PluginPool({ launcher, clock, warn: (m) => warnings.push(m), onApiCall: async () => null });
}

describe('PluginPool', () => {
  it('keeps one process per plugin and env, and hands the env over as the binding gave it', async () => {
    const { launcher, started } = fakeLauncher();
    const p = pool(launcher);
    const a = p.acquire(catalog, 'acme/p', { env: { MODE: 'a' } });
    const again = p.acquire(catalog, 'acme/p', { env: { MODE: 'a' } });
    const b = p.acquire(catalog, 'acme/p', { env: { MODE: 'b=c\0{"x":1}' } });
    expect(await a.connection).toBe(await again.connection);
    expect(await b.connection).not.toBe(await a.connection);
    expect(started.map((c) => c.spec.env)).toEqual([{ MODE: 'a' }, { MODE: 'b=c\0{"x":1}' }]);
    await p.close();
    expect(started.every((c) => c.closed)).toBe(true);
  });

  it('network: the manifest grants it, a binding can only take it away, and another grant is another process', async () => {
    const { launcher, started } = fakeLauncher();
    const p = pool(launcher);
    const networked: RunnerCatalog = { runners: [], plugins: new Map([['acme/p', { ...plugin, network: true }]]), warnings: [] };
    const granted = await p.acquire(networked, 'acme/p', { env: {} }).connection;
    const narrowed = await p.acquire(networked, 'acme/p', { env: {}, network: false }).connection;
    expect(narrowed).not.toBe(granted);
    expect(started.map((c) => c.spec.network)).toEqual([true, false]);
    // Without the manifest's grant a binding's network: true gives nothing.
    const { launcher: l2, started: s2 } = fakeLauncher();
    const p2 = pool(l2);
    await p2.acquire(catalog, 'acme/p', { env: {}, network: true }).connection;
    expect(s2.map((c) => c.spec.network)).toEqual([false]);
    await Promise.all([p.close(), p2.close()]);
  });

  it('an unknown plugin is runner.not_found', async () => {
    const { launcher } = fakeLauncher();
    await expect(pool(launcher).acquire(catalog, 'acme/none', { env: {} }).connection).rejects.toMatchObject({ code: 'runner.not_found' });
  });

  it('a process that failed but has not exited yet takes no new run: the next one starts a fresh process', async () => {
    const { launcher, started } = fakeLauncher();
    const p = pool(launcher);
    const first = await p.acquire(catalog, 'acme/p', { env: {} }).connection;
    expect(await p.acquire(catalog, 'acme/p', { env: {} }).connection).toBe(first);
    started[0]!.accepting = false; // a corrupt line: the group is killed, its exit not yet reaped
    const next = await p.acquire(catalog, 'acme/p', { env: {} }).connection;
    expect(next).not.toBe(first);
    expect(started).toHaveLength(2);
    started[0]!.die(); // the old exit arrives late and must not evict the fresh process
    await flush();
    expect(await p.acquire(catalog, 'acme/p', { env: {} }).connection).toBe(next);
    await p.close();
  });

  it('replaces a dead process on next use, backing off after five starts in ten seconds', async () => {
    const { launcher, started } = fakeLauncher();
    const time = manualClock();
    const warnings: string[] = [];
    const p = pool(launcher, time.clock, warnings);
    for (let i = 0; i < 5; i++) {
      (await p.acquire(catalog, 'acme/p', { env: {} }).connection).die();
      await flush();
    }
    expect(started).toHaveLength(5);
    const sixth = p.acquire(catalog, 'acme/p', { env: {} });
    await flush();
    expect(started).toHaveLength(5);
    expect(warnings.at(-1)).toMatch(/plugin acme\/p restarted 5 times in 10s; backing off/);
    time.advance(10_000);
    await sixth.connection;
    expect(started).toHaveLength(6);
  });

  it('reload routes new runs to a fresh process and stops the old one when its last run releases it', async () => {
    const { launcher, started } = fakeLauncher();
    const p = pool(launcher);
    const running = p.acquire(catalog, 'acme/p', { env: { K: 'v' } });
    const old = await running.connection;
    await p.reload('acme/p', plugin);
    expect(started).toHaveLength(2);
    expect(started[1]?.spec.env).toEqual({ K: 'v' });
    expect(await p.acquire(catalog, 'acme/p', { env: { K: 'v' } }).connection).toBe(started[1]);
    await flush();
    expect(old.closed).toBe(false);
    running.release();
    running.release(); // twice is once
    await flush();
    expect(old.closed).toBe(true);
    expect(started[1]?.closed).toBe(false);
    await p.close();
  });

  it('a reload whose start fails throws and leaves the old process serving', async () => {
    let fail = false;
    const { launcher, started } = fakeLauncher({ failNext: () => fail });
    const p = pool(launcher);
    const first = await p.acquire(catalog, 'acme/p', { env: {} }).connection;
    fail = true;
    await expect(p.reload('acme/p', plugin)).rejects.toMatchObject({ code: 'runner.start_failed' });
    fail = false;
    expect(await p.acquire(catalog, 'acme/p', { env: {} }).connection).toBe(first);
    expect(first.closed).toBe(false);
    expect(started).toHaveLength(1);
  });

  it('reload of a plugin with no process yet starts one warm with the default env', async () => {
    const { launcher, started } = fakeLauncher();
    const p = pool(launcher);
    await p.reload('acme/p', plugin);
    expect(started.map((c) => c.spec.env)).toEqual([{}]);
    expect(await p.acquire(catalog, 'acme/p', { env: {} }).connection).toBe(started[0]);
  });
});
