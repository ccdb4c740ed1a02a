// The run policy per conversation through a real in-process `lbot serve` (on SQLite, and on PostgreSQL run
// stores with a database of its own per test; real plugin processes): enqueue orders each conversation's runs while conversations overlap, interrupt cancels the
// running one, reject answers 409, parallel overlaps, shutdown ends queued runs unstarted, and a flood of
// one conversation is bounded. Runs wait on gate files the test writes, so the order is the test's, not
// the clock's; assertions are on the recorded start/end order only.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunOutcome } from '../../../src/core/host/host.js';
import { openConfigFile } from '../../../src/core/stores/config-file.js';
import { startServe, type ServeHandle } from '../../../src/runtime/server/serve.js';
import { RunManager } from '../../../src/runtime/server/run-manager.js';
import { createTempPlugins, type TempPlugins } from '../../helpers/plugins.js';
import { freshDatabase, postgresSkipReason, postgresUrl } from '../../helpers/postgres.js';
import { withReason } from '../../helpers/skip.js';

const TOKEN = 't'.repeat(40);
const SCRIPTED = 'plugin:acme/scripted/default';

/** The serve's in-process run manager (these serves run without --queue). */
function inProcess(serve: ServeHandle): RunManager {
  if (!(serve.runs instanceof RunManager)) throw new Error('expected the in-process run manager');
  return serve.runs;
}

type Ctx = { serve: ServeHandle; gates: string; log: string[]; outcomes: Map<string, RunOutcome> };
const cleanups: Array<() => Promise<void>> = [];
/** Where the suite being run keeps its run stores. */
let backend: 'sqlite' | 'postgres' = 'sqlite';

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A serve with one gated binding per entry: each run waits for the file named by its event id. */
async function open(bindings: Array<{ binding_id: string; run_policy?: string }>, serveConfig: Record<string, unknown> = {}): Promise<Ctx> {
  const plugins: TempPlugins = await createTempPlugins(['scripted']);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-policy-'));
  // In the plugin's own directory: a sandboxed plugin process sees it (not the host's /tmp).
  const gates = path.join(plugins.dir('scripted'), 'gates');
  await mkdir(gates);
  cleanups.push(async () => {
    await plugins.cleanup();
    await rm(dataDir, { recursive: true, force: true });
  });
  const script = [
    { wait_file: path.join(gates, '{event_id}') },
    { emit: { type: 'message.completed', data: { message: { role: 'assistant', content: 'done' } } } },
    { emit: { type: 'run.completed', data: {} } },
  ];
  const config = {
    serve: serveConfig,
    bindings: bindings.map((b) => ({ ...b, runner_id: SCRIPTED, scope: { scope_type: 'global', scope_id: null }, runner_config: { script } })),
  };
  await writeFile(path.join(dataDir, 'lbot.config.json'), JSON.stringify(config));
  let databaseUrl: string | null = null;
  if (backend === 'postgres') {
    const db = await freshDatabase();
    cleanups.push(db.drop);
    databaseUrl = db.url;
  }
  const log: string[] = [];
  const outcomes = new Map<string, RunOutcome>();
  const serve = await startServe({
    dataDir,
    pluginsDir: plugins.pluginsDir,
    configFile: openConfigFile(dataDir, {}),
    port: 0,
    databaseUrl,
    env: { LBOT_API_TOKEN: TOKEN },
    warn: () => undefined,
    hostHooks: {
      observer: {
        onRunStarted: (r) => log.push(`start ${r.event_id}`),
        onRunEnded: (o) => {
          log.push(`end ${o.event_id}`);
          outcomes.set(o.event_id, o);
        },
      },
    },
  });
  cleanups.push(() => serve.close());
  return { serve, gates, log, outcomes };
}

function event(event_id: string, conversation_id: string | null) {
  return {
    event_id,
    event_type: 'message.received',
    source: 'api',
    conversation_id,
    actor: { actor_type: 'user', actor_id: 'u1' },
    input: { text: event_id, contents: [{ type: 'text', text: event_id }], attachments: [] },
    delivery: { surface: 'api', supports_streaming: false },
  };
}

async function call(c: Ctx, method: string, route: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${c.serve.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json: unknown = await res.json();
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error(`not an object: ${JSON.stringify(json)}`);
  return { status: res.status, json: { ...json } };
}

/** POSTs the event to the binding and returns its run id (202 expected). */
async function post(c: Ctx, binding_id: string, event_id: string, conversation: string | null = 'conv-a'): Promise<string> {
  const r = await call(c, 'POST', '/v1/runs', { event: event(event_id, conversation), binding_id });
  expect(r.status, JSON.stringify(r.json)).toBe(202);
  return String(r.json.run_id);
}

const release = (c: Ctx, event_id: string) => writeFile(path.join(c.gates, event_id), '');

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const at = (c: Ctx, entry: string): number => {
  const i = c.log.indexOf(entry);
  expect(i, `${entry} in ${c.log.join(', ')}`).toBeGreaterThanOrEqual(0);
  return i;
};

for (const store of ['sqlite', 'postgres'] as const) {
  const skip = store === 'postgres' && postgresUrl === null;
  describe.skipIf(skip)(withReason(`run policy per conversation (${store})`, skip && postgresSkipReason), () => {
    beforeAll(() => {
      backend = store;
    });
    it('enqueue (the default): one conversation runs one at a time in arrival order, conversations overlap', async () => {
      const c = await open([{ binding_id: 'q' }]);
      const ids: Record<string, string> = {};
      for (const [e, conv] of [
        ['a1', 'conv-a'],
        ['b1', 'conv-b'],
        ['a2', 'conv-a'],
        ['b2', 'conv-b'],
        ['a3', 'conv-a'],
      ] as const)
        ids[e] = await post(c, 'q', e, conv);
      await until('a1 and b1 to start', () => c.log.includes('start a1') && c.log.includes('start b1'));
      // The waiting runs are visible with their place in the queue, and hold no slot.
      const a2 = await call(c, 'GET', `/v1/runs/${ids.a2}`);
      expect(a2.json).toMatchObject({ run_id: ids.a2, status: 'queued', binding_id: 'q', conversation_id: 'conv-a', queue: { ahead: ids.a1, position: 1 } });
      const a3 = await call(c, 'GET', `/v1/runs/${ids.a3}`);
      expect(a3.json).toMatchObject({ status: 'queued', queue: { ahead: ids.a2, position: 2 } });
      expect(inProcess(c.serve).activeCount).toBe(2);
      expect(inProcess(c.serve).queuedCount).toBe(3);
      // Released out of order: the queued ones first, the holders last.
      for (const e of ['a3', 'a2', 'b2', 'b1', 'a1']) await release(c, e);
      await until('every run to end', () => c.outcomes.size === 5);
      expect(at(c, 'end a1')).toBeLessThan(at(c, 'start a2'));
      expect(at(c, 'end a2')).toBeLessThan(at(c, 'start a3'));
      expect(at(c, 'end b1')).toBeLessThan(at(c, 'start b2'));
      // Both conversations' first runs were going at the same time.
      expect(at(c, 'start b1')).toBeLessThan(at(c, 'end a1'));
      expect(at(c, 'start a1')).toBeLessThan(at(c, 'end b1'));
      expect([...c.outcomes.values()].map((o) => o.status)).toEqual(Array(5).fill('completed'));
      for (const id of Object.values(ids)) expect((await call(c, 'GET', `/v1/runs/${id}`)).json).toMatchObject({ status: 'completed' });
    });

    it('events without a conversation id are never serialized', async () => {
      const c = await open([{ binding_id: 'q' }]);
      await post(c, 'q', 'n1', null);
      await post(c, 'q', 'n2', null);
      await until('both to start', () => c.log.includes('start n1') && c.log.includes('start n2'));
      await release(c, 'n1');
      await release(c, 'n2');
      await until('both to end', () => c.outcomes.size === 2);
    });

    it('interrupt: the running run ends cancelled with the reason, the new one completes', async () => {
      const c = await open([{ binding_id: 'i', run_policy: 'interrupt' }]);
      const first = await post(c, 'i', 'i1');
      await until('i1 to start', () => c.log.includes('start i1'));
      const second = await post(c, 'i', 'i2');
      await until('i1 to end', () => c.outcomes.has('i1'));
      expect(c.outcomes.get('i1')).toMatchObject({ run_id: first, status: 'cancelled', error: { code: 'cancelled', details: { interrupted_by: second } } });
      const recorded = await call(c, 'GET', `/v1/runs/${first}`);
      expect(recorded.json).toMatchObject({ status: 'cancelled', error: { code: 'cancelled' } });
      expect(JSON.stringify(recorded.json.error)).toContain(`interrupted by run ${second}`);
      await release(c, 'i2');
      await until('i2 to end', () => c.outcomes.has('i2'));
      expect(c.outcomes.get('i2')).toMatchObject({ run_id: second, status: 'completed' });
      expect(at(c, 'end i1')).toBeLessThan(at(c, 'start i2'));
    });

    it('reject: 409 run.conversation_busy naming the holder, nothing of the refused event is run or recorded', async () => {
      const c = await open([{ binding_id: 'r', run_policy: 'reject' }]);
      const holder = await post(c, 'r', 'r1');
      await until('r1 to start', () => c.log.includes('start r1'));
      const refused = await call(c, 'POST', '/v1/runs', { event: event('r2', 'conv-a'), binding_id: 'r' });
      expect(refused.status).toBe(409);
      expect(refused.json).toMatchObject({
        ok: false,
        error: { code: 'run.conversation_busy', retryable: true, details: { binding_id: 'r', conversation_id: 'conv-a', run_id: holder } },
      });
      // The routed entry point refuses the same way, and logs nothing of the refused event.
      const routed = await call(c, 'POST', '/v1/events', event('r2b', 'conv-a'));
      expect(routed.status).toBe(409);
      expect(routed.json).toMatchObject({ error: { code: 'run.conversation_busy', details: { run_id: holder } } });
      expect((await call(c, 'GET', '/v1/events/r2b')).status).toBe(404);
      // Another conversation of the same binding is free.
      await post(c, 'r', 'other', 'conv-b');
      expect((await call(c, 'GET', '/v1/events/r2')).status).toBe(404);
      await release(c, 'r1');
      await release(c, 'other');
      await until('both to end', () => c.outcomes.size === 2);
      const runs = (await call(c, 'GET', '/v1/runs')).json.items;
      expect(Array.isArray(runs) ? runs.length : -1).toBe(2);
      expect(c.log).not.toContain('start r2');
      // Once the holder has ended, the conversation takes events again.
      await post(c, 'r', 'r3');
      await release(c, 'r3');
      await until('r3 to end', () => c.outcomes.has('r3'));
    });

    it('an unknown run_policy is refused before anything runs', async () => {
      const c = await open([{ binding_id: 'q' }]);
      const bad = await call(c, 'POST', '/v1/runs', {
        event: event('x1', 'conv-a'),
        binding: { binding_id: 'inline', runner_id: SCRIPTED, run_policy: 'whenever' },
      });
      expect(bad.status).toBe(400);
      expect(bad.json).toMatchObject({ error: { code: 'invalid_argument' } });
      expect(JSON.stringify(bad.json)).toContain('run_policy');
      expect(c.log).toEqual([]);
    });

    it('parallel: runs of one conversation overlap', async () => {
      const c = await open([{ binding_id: 'p', run_policy: 'parallel' }]);
      await post(c, 'p', 'p1');
      await post(c, 'p', 'p2');
      await until('both to start', () => c.log.includes('start p1') && c.log.includes('start p2'));
      await release(c, 'p2');
      await until('p2 to end', () => c.outcomes.has('p2'));
      expect(c.outcomes.has('p1')).toBe(false);
      await release(c, 'p1');
      await until('p1 to end', () => c.outcomes.has('p1'));
    });

    it('shutdown: the running run is cancelled, queued runs end cancelled without ever starting', async () => {
      const c = await open([{ binding_id: 'q' }]);
      const running = await post(c, 'q', 's1');
      const queued = [await post(c, 'q', 's2'), await post(c, 'q', 's3')];
      await until('s1 to start', () => c.log.includes('start s1'));
      const waits = queued.map((id) => c.serve.runs.outcome(id));
      await release(c, 's2'); // a released gate must not let a queued run start during shutdown
      await c.serve.close();
      expect(c.outcomes.get('s1')).toMatchObject({ run_id: running, status: 'cancelled' });
      for (const [i, w] of waits.entries()) {
        expect(await w).toMatchObject({ run_id: queued[i], status: 'cancelled', error: { code: 'cancelled', details: { never_started: true } } });
      }
      expect(c.log.filter((l) => l.startsWith('start'))).toEqual(['start s1']);
    });

    it('a cancelled queued run never starts; the next one takes its place', async () => {
      const c = await open([{ binding_id: 'q' }]);
      await post(c, 'q', 'c1');
      const dropped = await post(c, 'q', 'c2');
      const kept = await post(c, 'q', 'c3');
      expect((await call(c, 'POST', `/v1/runs/${dropped}/cancel`)).status).toBe(202);
      expect((await call(c, 'GET', `/v1/runs/${kept}`)).json).toMatchObject({ status: 'queued', queue: { position: 1 } });
      for (const e of ['c3', 'c1']) await release(c, e);
      await until('c1 and c3 to end', () => c.outcomes.has('c1') && c.outcomes.has('c3'));
      expect(c.log).not.toContain('start c2');
      expect((await call(c, 'GET', `/v1/runs/${dropped}`)).status).toBe(404);
    });

    it('a flood of events on one conversation is bounded: past the queue cap 429 rate_limited, others unaffected', async () => {
      const c = await open([{ binding_id: 'q' }], { max_queued_per_conversation: 3 });
      await post(c, 'q', 'f0');
      await until('f0 to start', () => c.log.includes('start f0'));
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) => call(c, 'POST', '/v1/runs', { event: event(`f${i + 1}`, 'conv-a'), binding_id: 'q' })),
      );
      const accepted = answers.filter((a) => a.status === 202);
      const limited = answers.filter((a) => a.status === 429);
      expect([accepted.length, limited.length]).toEqual([3, 9]);
      for (const l of limited) {
        expect(l.json).toMatchObject({ error: { code: 'rate_limited', retryable: true, details: { conversation_id: 'conv-a', queued: 3 } } });
        expect(JSON.stringify(l.json)).toContain('serve.max_queued_per_conversation');
      }
      expect(inProcess(c.serve).queuedCount).toBe(3);
      // Another conversation is not held up by the flood.
      await post(c, 'q', 'g1', 'conv-b');
      await until('g1 to start', () => c.log.includes('start g1'));
      for (let i = 0; i <= 12; i++) await release(c, `f${i}`);
      await release(c, 'g1');
      await until('the accepted runs to end', () => c.outcomes.size === 5);
      const runs = (await call(c, 'GET', '/v1/runs')).json.items;
      expect(Array.isArray(runs) ? runs.length : -1).toBe(5);
    });
  });
}
