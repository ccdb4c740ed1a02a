// The durable run queue end to end (issue: past one machine): two `serve --queue` instances and two
// `lbot worker` processes on one PostgreSQL database; events of many conversations posted to both serves run
// exactly once and in order per conversation, are readable from either serve, and a worker killed with
// SIGKILL in the middle of a run has that run retried by the other worker with no result duplicated.
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

async function post(serve: ServeProcess, conversation: string, n: number, script: Step[]): Promise<string> {
  const r = await serve.request('POST', '/v1/runs', { event: event(conversation, n), runner_id: SCRIPTED, config: { script } });
  expect(r.status, r.text).toBe(202);
  return (r.json as { run_id: string }).run_id;
}

const messages = (run: Record<string, unknown>): string[] =>
  (Array.isArray(run.results) ? run.results : []).flatMap((r: { type?: string; data?: { message?: { content?: unknown } } }) =>
    r.type === 'message.completed' ? [String(r.data?.message?.content)] : [],
  );

describe.skipIf(postgresUrl === null)(withReason('the durable run queue (serve --queue, lbot worker)', postgresUrl === null && postgresSkipReason), () => {
  it('1,000 events over 50 conversations through two serves and two workers: each run once, in order per conversation, readable anywhere; a SIGKILLed worker run is retried', async () => {
    const d = await database();
    const [sa, sb, wa, wb] = await Promise.all([scenario(), scenario(), scenario(), scenario()]);
    const serves = [await serveOn(sa, d.url), await serveOn(sb, d.url)] as const;
    const workers = await Promise.all([workerOn(wa, d.url), workerOn(wb, d.url)]);
    const CONVERSATIONS = 50;
    const PER = 20;
    const SLOW = { conversation: 'conv-0', n: 5 };
    const accepted = new Map<string, { conversation: string; n: number; via: number }>();

    await Promise.all(
      Array.from({ length: CONVERSATIONS }, async (_, c) => {
        const conversation = `conv-${c}`;
        for (let n = 0; n < PER; n++) {
          const slow = conversation === SLOW.conversation && n === SLOW.n;
          const via = (c + n) % 2;
          const script = [...(slow ? [{ sleep_ms: 3000 }] : []), say(`${conversation}:${n}`), done()];
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
});
