// The durable run queue end to end (issue: past one machine): two `serve --queue` instances and two
// `lbot worker` processes on one PostgreSQL database; events of many conversations posted to both serves run
// exactly once and in order per conversation, are readable from either serve, and a worker killed with
// SIGKILL in the middle of a run has that run retried by the other worker with no result duplicated.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { execa, type ResultPromise } from 'execa';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { freshDatabase, postgresSkipReason, postgresUrl } from '../helpers/postgres.js';
import { LBOT_BIN, startServe, type ServeProcess } from '../helpers/serve.js';
import { withReason } from '../helpers/skip.js';
import { done, say, scenario, SCRIPTED, type Scenario, type Step } from './host/harness.js';

type Db = Awaited<ReturnType<typeof freshDatabase>>;
type Worker = { proc: ResultPromise; pid: number; worker_id: string; stderr(): string };

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function database(): Promise<Db> {
  const d = await freshDatabase();
  cleanups.push(() => d.drop());
  return d;
}

async function serveOn(s: Scenario, url: string): Promise<ServeProcess> {
  const serve = await startServe({
    dataDir: s.dataDir,
    pluginsDir: s.plugins.pluginsDir,
    args: ['--queue'],
    env: { LBOT_DATABASE_URL: url, LBOT_CHECK_SHAPES: '1' },
  });
  cleanups.push(() => serve.stop('SIGKILL').then(() => undefined));
  return serve;
}

async function workerOn(s: Scenario, url: string, args: string[] = []): Promise<Worker> {
  const proc = execa(
    process.execPath,
    [LBOT_BIN, '--data-dir', s.dataDir, '--plugins', s.plugins.pluginsDir, '--json', 'worker', '--lease', '2', '--log-format', 'json', ...args],
    { env: { LBOT_DATABASE_URL: url, LBOT_CHECK_SHAPES: '1' }, reject: false, buffer: false, stdin: 'ignore' },
  );
  cleanups.push(async () => {
    if (proc.exitCode === null) proc.kill('SIGKILL');
    await proc;
  });
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const ready = await new Promise<{ worker_id: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start: ${err}`)), 20_000);
    createInterface({ input: proc.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      resolve(JSON.parse(line) as { worker_id: string });
    });
    void proc.then(() => reject(new Error(`worker exited early: ${err}`)));
  });
  return { proc, pid: proc.pid ?? -1, worker_id: ready.worker_id, stderr: () => err };
}

/** Live processes whose command line names `dir` (a worker's plugin processes, sandboxed or not). */
function processesUnder(dir: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return !/ Z /.test(stat.slice(stat.lastIndexOf(')'))) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir);
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(sql, params)).rows;
  } finally {
    await c.end();
  }
}

async function until<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 120_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const event = (conversation: string, n: number) => ({
  event_id: `${conversation}-${n}`,
  event_type: 'message.received',
  source: 'api',
  conversation_id: conversation,
  actor: { actor_type: 'user', actor_id: 'u1', actor_name: 'Ann' },
  subject: { subject_type: 'message', subject_id: `m-${conversation}-${n}` },
  input: { text: `${conversation}:${n}`, contents: [{ type: 'text', text: `${conversation}:${n}` }], attachments: [] },
  delivery: { surface: 'cli', supports_streaming: true },
});

async function post(serve: ServeProcess, conversation: string, n: number, script: Step[], run_policy?: string): Promise<string> {
  const r = await send(serve, conversation, n, script, run_policy);
  expect(r.status, r.text).toBe(202);
  return (r.json as { run_id: string }).run_id;
}

/** POST /v1/runs of the scripted runner; with a run_policy, on an inline binding of that policy. */
function send(serve: ServeProcess, conversation: string, n: number, script: Step[], run_policy?: string) {
  const target = run_policy
    ? { binding: { binding_id: `b-${run_policy}`, runner_id: SCRIPTED, event_types: ['*'], run_policy }, config: { script } }
    : { runner_id: SCRIPTED, config: { script } };
  return serve.request('POST', '/v1/runs', { event: event(conversation, n), ...target });
}

async function statusOf(serve: ServeProcess, run_id: string): Promise<string | null> {
  const r = await serve.request('GET', `/v1/runs/${run_id}`);
  return r.status === 200 ? String((r.json as { status: unknown }).status) : null;
}

const messages = (run: Record<string, unknown>): string[] =>
  (Array.isArray(run.results) ? run.results : []).flatMap((r: { type?: string; data?: { message?: { content?: unknown } } }) =>
    r.type === 'message.completed' ? [String(r.data?.message?.content)] : [],
  );

describe.skipIf(postgresUrl === null)(withReason('the durable run queue (serve --queue, lbot worker)', postgresUrl === null && postgresSkipReason), () => {
  it('1,000 events over 50 conversations through two serves and two workers: each run once, in order per conversation, readable anywhere; a SIGKILLed worker run is retried', async () => {
    const d = await database();
    const [sa, sb, wa, wb] = await Promise.all([scenario(), scenario(), scenario(), scenario()]);
    const CONVERSATIONS = 50;
    const PER = 20;
    // Every event of a conversation may be posted before its first run ends on a slow machine: admit them all.
    for (const s of [sa, sb]) await s.writeConfig({ serve: { max_queued_per_conversation: PER } });
    const serves = [await serveOn(sa, d.url), await serveOn(sb, d.url)] as const;
    const workers = await Promise.all([workerOn(wa, d.url), workerOn(wb, d.url)]);
    // The slow run holds until the test opens its gate, on whichever worker runs it: a path relative to the
    // plugin's own dir (its cwd, and all a sandboxed runner sees), so it is claimed and running when looked for.
    const SLOW = { conversation: 'conv-0', n: 5, gate: 'gates/slow' };
    const accepted = new Map<string, { conversation: string; n: number; via: number }>();

    await Promise.all(
      Array.from({ length: CONVERSATIONS }, async (_, c) => {
        const conversation = `conv-${c}`;
        for (let n = 0; n < PER; n++) {
          const slow = conversation === SLOW.conversation && n === SLOW.n;
          const via = (c + n) % 2;
          const script = [...(slow ? [{ wait_file: SLOW.gate }] : []), say(`${conversation}:${n}`), done()];
          accepted.set(await post(serves[via], conversation, n, script), { conversation, n, via });
        }
      }),
    );
    expect(accepted.size).toBe(CONVERSATIONS * PER);

    // Kill the worker running the slow run while it runs; the other worker takes it over after the lease.
    const slowRun = [...accepted].find(([, a]) => a.conversation === SLOW.conversation && a.n === SLOW.n)?.[0] ?? '';
    const owner = await until('the slow run to be claimed', async () => {
      const [row] = await query<{ worker_id: string | null; status: string }>(d.url, 'SELECT worker_id, status FROM run_queue WHERE run_id = $1', [slowRun]);
      return row?.status === 'running' && row.worker_id ? row.worker_id : null;
    });
    const victim = workers.find((w) => w.worker_id === owner);
    expect(victim, `owner ${owner}`).toBeDefined();
    victim?.proc.kill('SIGKILL');
    // Its plugin processes end with it: no runner goes on without its host.
    const victimPlugins = (victim === workers[0] ? wa : wb).plugins.pluginsDir;
    await until('the dead worker plugin processes to end', async () => processesUnder(victimPlugins).length === 0, 15_000);
    for (const s of [wa, wb]) {
      await mkdir(path.join(s.plugins.dir('scripted'), 'gates'), { recursive: true });
      await writeFile(path.join(s.plugins.dir('scripted'), SLOW.gate), '');
    }

    await until('every run to end', async () => {
      const [row] = await query<{ n: string }>(d.url, `SELECT count(*) AS n FROM runs WHERE status <> 'running'`);
      return Number(row?.n) === CONVERSATIONS * PER;
    }).catch(async (err: unknown) => {
      const stats = await query(d.url, 'SELECT status, attempts, count(*) FROM run_queue GROUP BY 1, 2');
      const jobs = await query(d.url, 'SELECT locked_by, attempts, last_error FROM graphile_worker.jobs LIMIT 5');
      throw new Error(`${String(err)}: ${JSON.stringify(stats)} ${JSON.stringify(jobs)} ${workers.map((w) => w.stderr().slice(-3000)).join('\n---\n')}`);
    });

    // Exactly once: one run record per accepted event, one event-log row and one user message each.
    const runs = await query<{ run_id: string; event_id: string; status: string; started_at: number; ended_at: number }>(
      d.url,
      'SELECT run_id, event_id, status, started_at, ended_at FROM runs',
    );
    expect(runs).toHaveLength(CONVERSATIONS * PER);
    expect(new Set(runs.map((r) => r.run_id))).toEqual(new Set(accepted.keys()));
    expect(runs.filter((r) => r.status !== 'completed')).toEqual([]);
    expect(await query(d.url, `SELECT event_id FROM event_log GROUP BY event_id HAVING count(*) > 1`)).toEqual([]);
    expect(await query(d.url, `SELECT event_id FROM transcript WHERE role = 'user' GROUP BY event_id HAVING count(*) > 1`)).toEqual([]);

    // In order per conversation: each run started after the one accepted before it ended.
    const byId = new Map(runs.map((r) => [r.run_id, r]));
    for (let c = 0; c < CONVERSATIONS; c++) {
      const lane = [...accepted].filter(([, a]) => a.conversation === `conv-${c}`).sort((x, y) => x[1].n - y[1].n);
      for (let i = 1; i < lane.length; i++) {
        const prev = byId.get(lane[i - 1]?.[0] ?? '');
        const next = byId.get(lane[i]?.[0] ?? '');
        expect(Number(next?.started_at), `conv-${c} run ${i}`).toBeGreaterThanOrEqual(Number(prev?.ended_at));
      }
    }

    // Every result is readable from the serve that did not accept it, exactly once.
    for (const [run_id, a] of accepted) {
      const r = await serves[1 - a.via].request('GET', `/v1/runs/${run_id}`);
      expect(r.status, r.text).toBe(200);
      expect(messages(r.json as Record<string, unknown>)).toEqual([`${a.conversation}:${a.n}`]);
    }
    const slow = (await serves[0].request('GET', `/v1/runs/${slowRun}`)).json as { warnings: string[] };
    expect(slow.warnings.join('\n')).toMatch(/lost with worker .*attempt 2/);
    const survivor = workers.find((w) => w !== victim);
    expect(survivor?.stderr()).toContain('stopped heartbeating');
  }, 240_000);

  it('run policies, cancel, redelivery and the live result stream work across instances', async () => {
    const d = await database();
    const [sa, sb, w] = await Promise.all([scenario(), scenario(), scenario()]);
    const [a, b] = [await serveOn(sa, d.url), await serveOn(sb, d.url)];
    await workerOn(w, d.url);
    // Gates live in the plugin's own dir: a sandboxed runner (bubblewrap, where installed) sees that dir only.
    const gates = path.join(w.plugins.dir('scripted'), 'gates');
    await mkdir(gates);
    const gate = (name: string) => path.join(gates, name);
    const release = (name: string) => writeFile(gate(name), '');

    // The same event for the same binding, posted to both instances, is one run.
    const first = await post(a, 'redelivered', 1, [say('once'), done()]);
    expect(await post(b, 'redelivered', 1, [say('once'), done()])).toBe(first);
    expect(await until('the redelivered run to end', async () => ((await statusOf(a, first)) === 'completed' ? true : null))).toBe(true);

    // reject: a second event while the conversation's run is going is 409, wherever it is posted.
    const held = await post(a, 'rej', 1, [{ wait_file: gate('rej') }, say('held'), done()], 'reject');
    await until('the held run to start', async () => (await statusOf(b, held)) === 'running');
    const refused = await send(b, 'rej', 2, [done()], 'reject');
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json).toMatchObject({ error: { code: 'run.conversation_busy', details: { run_id: held } } });

    // The result stream of a run going on a worker, read from the instance that did not accept it.
    const streamed = b.request('GET', `/v1/runs/${held}/results`);
    await new Promise((r) => setTimeout(r, 300));
    await release('rej');
    const lines = (await streamed).text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.type)).toEqual(['message.completed', 'run.summary']);
    expect(lines.at(-1)).toMatchObject({ status: 'completed' });

    // interrupt: the newest event wins; the waiting one never starts, the running one is cancelled on the worker.
    // The first run ignores the cancel until the host's grace ends, so the second is still waiting when the third comes.
    const i1 = await post(a, 'int', 1, [{ ignore_cancel: true }, { sleep_ms: 60_000 }, done()], 'interrupt');
    await until('the first interrupt run to start', async () => (await statusOf(a, i1)) === 'running');
    const i2 = await post(b, 'int', 2, [say('second'), done()], 'interrupt');
    const i3 = await post(a, 'int', 3, [say('third'), done()], 'interrupt');
    expect(await until('the newest run to end', async () => await statusOf(b, i3).then((st) => (st === 'completed' ? st : null)))).toBe('completed');
    expect(await statusOf(a, i1)).toBe('cancelled');
    expect((await a.request('GET', `/v1/runs/${i2}`)).status).toBe(404);
    expect(await query(d.url, 'SELECT run_id FROM runs WHERE run_id = $1', [i2])).toEqual([]);

    // cancel through either instance: a queued run never starts, a running one is cancelled where it runs.
    const c1 = await post(a, 'can', 1, [{ wait_file: gate('never') }, done()]);
    await until('the run to cancel to start', async () => (await statusOf(a, c1)) === 'running');
    const c2 = await post(a, 'can', 2, [say('never'), done()]);
    expect(await b.request('GET', `/v1/runs/${c2}`)).toMatchObject({ status: 200, json: { status: 'queued', queue: { ahead: c1, position: 1 } } });
    expect((await b.request('POST', `/v1/runs/${c2}/cancel`)).status).toBe(202);
    expect((await b.request('POST', `/v1/runs/${c1}/cancel`)).status).toBe(202);
    expect(await until('the cancelled run to end', async () => await statusOf(a, c1).then((st) => (st === 'cancelled' ? st : null)))).toBe('cancelled');
    expect((await a.request('GET', `/v1/runs/${c2}`)).status).toBe(404);
    expect((await a.request('POST', `/v1/runs/${c1}/cancel`)).json).toMatchObject({ error: { code: 'run.not_in_flight' } });
  }, 120_000);

  it('worker --on-lost fail: the run of a SIGKILLed worker ends failed with run.worker_lost instead of running again', async () => {
    const d = await database();
    const [s, w1, w2] = await Promise.all([scenario(), scenario(), scenario()]);
    const serve = await serveOn(s, d.url);
    const doomed = await workerOn(w1, d.url, ['--on-lost', 'fail']);
    const run = await post(serve, 'lost', 1, [{ sleep_ms: 60_000 }, say('never'), done()]);
    await until('the run to start', async () => (await statusOf(serve, run)) === 'running');
    doomed.proc.kill('SIGKILL');
    await workerOn(w2, d.url, ['--on-lost', 'fail']);
    const ended = await until('the lost run to be failed', async () => {
      const r = (await serve.request('GET', `/v1/runs/${run}`)).json as { status: string };
      return r.status === 'failed' ? r : null;
    });
    expect(ended).toMatchObject({ status: 'failed', error: { code: 'run.worker_lost', retryable: true } });
    expect(messages(ended)).toEqual([]);
  }, 60_000);

  it('a queue row no worker can run (altered request) ends failed with its error once, and the queue goes on', async () => {
    const d = await database();
    const [s, w] = await Promise.all([scenario(), scenario()]);
    const serve = await serveOn(s, d.url);
    await workerOn(w, d.url);
    // Queued behind a run of the same conversation, so no worker has taken it when the row is altered.
    await post(serve, 'bad', 0, [{ sleep_ms: 1500 }, say('first'), done()]);
    const bad = await post(serve, 'bad', 1, [say('never'), done()]);
    await query(d.url, `UPDATE run_queue SET request_json = '{"event": {}, "binding": {"env": {"LD_PRELOAD": "/x.so"}}}' WHERE run_id = $1`, [bad]);
    const next = await post(serve, 'bad', 2, [say('after'), done()]);
    const failed = await until('the altered run to fail', async () => {
      const r = (await serve.request('GET', `/v1/runs/${bad}`)).json as { status?: string };
      return r.status === 'failed' ? r : null;
    });
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'event.invalid' } });
    expect(await until('the next run', async () => ((await statusOf(serve, next)) === 'completed' ? true : null))).toBe(true);
  }, 60_000);

  it('SIGTERM stops a worker gracefully: the run in flight ends completed, nothing new is claimed, exit 0', async () => {
    const d = await database();
    const [s, w] = await Promise.all([scenario(), scenario()]);
    const serve = await serveOn(s, d.url);
    const worker = await workerOn(w, d.url, ['--concurrency', '1']);
    const running = await post(serve, 'term', 1, [{ sleep_ms: 1500 }, say('finished'), done()]);
    await until('the run to start', async () => (await statusOf(serve, running)) === 'running');
    const waiting = await post(serve, 'other', 1, [say('later'), done()]);
    worker.proc.kill('SIGTERM');
    expect((await worker.proc).exitCode).toBe(0);
    expect(await statusOf(serve, running)).toBe('completed');
    expect(await serve.request('GET', `/v1/runs/${waiting}`)).toMatchObject({ json: { status: 'queued' } });
    expect(await query(d.url, 'SELECT worker_id FROM queue_workers')).toEqual([]);
  }, 60_000);
});
