// The durable run queue (issue: past one machine), on a private PostgreSQL cluster (bench/postgres.mjs):
// 1. Throughput of CPU-bound runs (the scripted runner's spin_ms) through `serve --queue` with one `lbot worker`
//    and then two, each worker one plugin process: on two cores two workers should run ≥ 1.5× as many runs/s.
// 2. The overhead of a queued run: one trivial run at a time, POST /v1/runs?wait=1 through serve --queue and a
//    worker, against the same run on a serve that runs it in process, on the same PostgreSQL stores.
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createDatabase, startPostgres } from './postgres.mjs';
import { figure, fmt, percentile, report, skip } from './stats.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const RUNS = Number(process.env.BENCH_QUEUE_RUNS ?? 48);
const SPIN_MS = Number(process.env.BENCH_QUEUE_SPIN_MS ?? 100);
const LATENCY_RUNS = Number(process.env.BENCH_QUEUE_LATENCY_RUNS ?? 100);
const TOKEN = 'bench-token-0123456789abcdef0123456789abcdef';
const RUNNER = 'plugin:acme/scripted/default';
const REPLY = { emit: { type: 'message.completed', data: { message: { role: 'assistant', content: 'done' } } } };
const END = { emit: { type: 'run.completed', data: {} } };

const server = await startPostgres();
if (!server.url) {
  skip('queue', server.why);
  process.exit(0);
}
const tmp = mkdtempSync(path.join(os.tmpdir(), 'lbot-bench-queue-'));
const plugins = path.join(tmp, 'plugins');
cpSync(path.join(root, 'fixtures', 'runners', 'scripted'), path.join(plugins, 'scripted'), { recursive: true });
writeFileSync(path.join(tmp, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
mkdirSync(path.join(tmp, 'node_modules'));
symlinkSync(root, path.join(tmp, 'node_modules', 'lbot'), 'dir');
const children = new Set();

/** Starts `lbot …` and resolves its first stdout line (serve.ready / worker.ready) with the process. */
function lbot(args, env) {
  const child = spawn(process.execPath, [path.join(root, 'bin', 'lbot.js'), '--plugins', plugins, '--json', ...args], {
    env: { ...process.env, LBOT_API_TOKEN: TOKEN, ...env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  children.add(child);
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', (l) => resolve({ child, ready: JSON.parse(l) }));
    child.once('exit', (code) => reject(new Error(`lbot ${args.join(' ')} exited (${code}) before it was ready`)));
  });
}

async function stop(p) {
  if (p.child.exitCode !== null) return;
  p.child.kill('SIGTERM');
  await new Promise((r) => p.child.once('exit', r));
  children.delete(p.child);
}

const event = (conversation, n) => ({
  event_id: `${conversation}-${n}`,
  event_type: 'message.received',
  source: 'api',
  conversation_id: conversation,
  input: { text: 'go', contents: [{ type: 'text', text: 'go' }], attachments: [] },
  delivery: { surface: 'cli', supports_streaming: true },
});

async function postRun(url, body, wait = false) {
  const res = await fetch(`${url}/v1/runs${wait ? '?wait=1' : ''}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`POST /v1/runs: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function waitAll(url, ids) {
  for (const id of ids) {
    for (;;) {
      const r = await fetch(`${url}/v1/runs/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((x) => x.json());
      if (r.status !== 'running' && r.status !== 'queued') break;
      await new Promise((res) => setTimeout(res, 20));
    }
  }
}

/** RUNS CPU-bound runs in RUNS conversations through serve --queue and `workers` workers: runs/s. */
async function throughput(db, workers, label) {
  const serve = await lbot(['--data-dir', path.join(tmp, `serve-${label}`), 'serve', '--port', '0', '--queue'], { LBOT_DATABASE_URL: db });
  const ws = [];
  for (let i = 0; i < workers; i++)
    ws.push(await lbot(['--data-dir', path.join(tmp, `worker-${label}-${i}`), 'worker', '--concurrency', '2'], { LBOT_DATABASE_URL: db }));
  const script = [{ spin_ms: SPIN_MS }, REPLY, END];
  // Warm each worker's plugin process: one run per worker, waited for.
  const warm = [];
  for (let i = 0; i < workers * 2; i++)
    warm.push((await postRun(serve.ready.url, { event: event(`warm-${label}`, i), runner_id: RUNNER, config: { script } })).run_id);
  await waitAll(serve.ready.url, warm);
  const t0 = performance.now();
  const ids = await Promise.all(
    Array.from(
      { length: RUNS },
      async (_, i) => (await postRun(serve.ready.url, { event: event(`c-${label}-${i}`, 0), runner_id: RUNNER, config: { script } })).run_id,
    ),
  );
  await waitAll(serve.ready.url, ids);
  const secs = (performance.now() - t0) / 1000;
  for (const w of ws) await stop(w);
  await stop(serve);
  return RUNS / secs;
}

/** p50 of one trivial run at a time through POST ?wait=1 on `url`. */
async function latency(url, label) {
  const script = [REPLY, END];
  const ms = [];
  for (let i = 0; i < LATENCY_RUNS + 5; i++) {
    const t = performance.now();
    const r = await postRun(url, { event: event(`lat-${label}`, i), runner_id: RUNNER, config: { script } }, true);
    if (r.status !== 'completed') throw new Error(`run ${r.run_id} ${r.status}: ${JSON.stringify(r.error)}`);
    if (i >= 5) ms.push(performance.now() - t);
  }
  return percentile(ms, 50);
}

try {
  const one = await throughput(await createDatabase(server.url, 'bench_q1'), 1, 'one');
  const two = await throughput(await createDatabase(server.url, 'bench_q2'), 2, 'two');

  const dbLat = await createDatabase(server.url, 'bench_qlat');
  const queued = await lbot(['--data-dir', path.join(tmp, 'lat-serve'), 'serve', '--port', '0', '--queue'], { LBOT_DATABASE_URL: dbLat });
  const worker = await lbot(['--data-dir', path.join(tmp, 'lat-worker'), 'worker', '--concurrency', '1'], { LBOT_DATABASE_URL: dbLat });
  const queuedMs = await latency(queued.ready.url, 'queued');
  await stop(worker);
  await stop(queued);
  const direct = await lbot(['--data-dir', path.join(tmp, 'lat-direct'), 'serve', '--port', '0'], { LBOT_DATABASE_URL: dbLat });
  const directMs = await latency(direct.ready.url, 'direct');
  await stop(direct);

  console.log(`queue benchmark: ${RUNS} runs of ${SPIN_MS} ms CPU each, workers with --concurrency 2 (one plugin process each)`);
  console.log(`  1 worker: ${one.toFixed(2)} runs/s; 2 workers: ${two.toFixed(2)} runs/s (${(two / one).toFixed(2)}×, target ≥ 1.5×)`);
  console.log(`  one trivial run, POST ?wait=1: queued ${fmt(queuedMs)} ms p50, in process ${fmt(directMs)} ms p50`);
  report(
    'queue',
    [
      figure({
        name: 'queue.throughput_2_workers',
        label: `CPU-bound runs/s with 2 workers vs 1 (${SPIN_MS} ms CPU each)`,
        unit: 'runs/s',
        value: two,
        baseline: one,
        baselineLabel: '1 worker',
        target: { of: 'ratio', op: '>=', limit: 1.5 },
      }),
      figure({
        name: 'queue.run_overhead',
        label: 'one trivial run through serve --queue and a worker, p50',
        unit: 'ms',
        value: queuedMs,
        baseline: directMs,
        baselineLabel: 'the same run in process (serve on the same PostgreSQL)',
        note: 'informational: the queue adds a transaction, a job claim and the notification round trip',
      }),
    ],
    { runs: RUNS, spin_ms: SPIN_MS, latency_runs: LATENCY_RUNS },
  );
} finally {
  for (const c of children) c.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
  await server.stop();
}
