// `lbot serve` under load (issue 6): POST /v1/runs?wait=1 with the echo runner at a fixed concurrency over
// loopback, against a bare fastify handler answering a body of the same size (the floor), and, as a yardstick
// between the two, the least durable host that runs its runner out of process (serve-durable-child.mjs). Both servers are
// processes of their own; this process is only the client. Each server first answers BENCH_WARMUP untimed requests. Bounded in count and time; reports runs/s and
// p50/p99 latency, and the resident memory of serve when idle and after BENCH_RSS_RUNS runs in all.
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, cpSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from './json-lines.mjs';
import { figure, fmt, inFlight, percentile, ratio, report } from './stats.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const COUNT = Number(process.env.BENCH_REQUESTS ?? 3000);
const MAX_MS = Number(process.env.BENCH_MAX_MS ?? 30_000);
/** Requests each server answers, untimed, before the timed ones: both are measured warm (JIT, pools, caches). */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1000);
/** Runs serve has made in all when its memory is read the second time (issue 21: ≤ 150 MB after 10,000). */
const RSS_RUNS = Number(process.env.BENCH_RSS_RUNS ?? 10_000);
const RSS_LIMIT_MB = 150;
const event = JSON.parse(readFileSync(path.join(root, 'fixtures', 'events', 'msg.json'), 'utf8'));

// A keep-alive client on node:http: lighter than fetch, so the client does not dominate the two cores.
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
function post(url, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Resident memory of a process in MB (Linux /proc), or null where it cannot be read. */
function rssMb(pid) {
  try {
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : null;
  } catch {
    return null;
  }
}

/** Fires COUNT requests with CONCURRENCY in flight, stopping early after MAX_MS. */
async function load(send, count = COUNT, maxMs = MAX_MS) {
  const latencies = [];
  let errors = 0;
  const deadline = Date.now() + maxMs;
  const secs = await inFlight(
    CONCURRENCY,
    count,
    async () => {
      const t = performance.now();
      const ok = await send().catch(() => false);
      if (ok) latencies.push(performance.now() - t);
      else errors++;
    },
    () => Date.now() < deadline,
  );
  return { done: latencies.length, errors, per_s: Math.round(latencies.length / secs), p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99) };
}

const tmp = mkdtempSync(path.join(os.tmpdir(), 'lbot-bench-serve-'));
const plugins = path.join(tmp, 'plugins');
cpSync(path.join(root, 'fixtures', 'runners', 'echo'), path.join(plugins, 'echo'), { recursive: true });
// Each request is a new event in a conversation of its own, like many chats at once: one conversation's events
// run one at a time (run_policy enqueue) and a redelivered event_id is answered from its first run.
/** The body of request `n`: a new event in a conversation of its own, ids prefixed with `prefix`. */
const eventBody = (prefix, n, extra = {}) =>
  JSON.stringify({ event: { ...event, event_id: `${prefix}-${n}`, conversation_id: `${prefix}-conv-${n}` }, ...extra });
let sent = 0;
const nextBody = () => eventBody('bench', sent++, { runner_id: 'plugin:acme/echo/default' });
const serve = await startServer(
  [path.join(root, 'bin', 'lbot.js'), '--data-dir', path.join(tmp, 'data'), '--plugins', plugins, '--json', 'serve', '--port', '0'],
  { env: { ...process.env, LBOT_API_TOKEN: 'bench-token', LBOT__SERVE__MAX_CONCURRENT_RUNS: '256', LBOT__SERVE__MAX_RUNS_PER_PLUGIN: '256' } },
);
const headers = { authorization: 'Bearer bench-token', 'content-type': 'application/json' };
const lbotSend = async () => {
  const res = await post(`${serve.url}/v1/runs?wait=1`, headers, nextBody());
  return res.status === 200 && JSON.parse(res.text).status === 'completed';
};
await lbotSend(); // starts the plugin process
const rssIdle = rssMb(serve.child.pid);
await load(lbotSend, WARMUP);
const lbot = await load(lbotSend);
// The rest of RSS_RUNS, for the memory serve holds after many runs (not timed).
const more = await load(lbotSend, Math.max(0, RSS_RUNS - sent), 10 * 60_000);
const runsInAll = sent;
const rssAfter = rssMb(serve.child.pid);
await serve.stop();

const floorServer = await startServer([path.join(root, 'bench', 'serve-floor-child.mjs')]);
const floorBody = JSON.stringify({ event, runner_id: 'plugin:acme/echo/default' });
const floorSend = async () => (await post(`${floorServer.url}/v1/runs`, headers, floorBody)).status === 200;
await load(floorSend, WARMUP);
const floor = await load(floorSend);
await floorServer.stop();
// The yardstick between the two (serve-durable-child.mjs): one out-of-process hop and the run's rows, nothing else.
const durableServer = await startServer([path.join(root, 'bench', 'serve-durable-child.mjs')]);
let durableSent = 0;
const durableSend = async () => (await post(`${durableServer.url}/v1/runs`, headers, eventBody('durable', durableSent++))).status === 200;
await load(durableSend, WARMUP);
const durable = await load(durableSend);
await durableServer.stop();
agent.destroy();
rmSync(tmp, { recursive: true, force: true });

const share = ratio(lbot.per_s, floor.per_s);
console.log(`serve benchmark, ${CONCURRENCY} concurrent, up to ${COUNT} requests after ${WARMUP} to warm up (servers in processes of their own)`);
console.log(`  lbot serve (echo run per request): ${lbot.per_s} runs/s, p50 ${fmt(lbot.p50_ms)} ms, p99 ${fmt(lbot.p99_ms)} ms, errors ${lbot.errors}`);
console.log(`  bare fastify (floor):              ${floor.per_s} req/s, p50 ${fmt(floor.p50_ms)} ms, p99 ${fmt(floor.p99_ms)} ms`);
console.log(`  least durable host (yardstick):    ${durable.per_s} runs/s, p50 ${fmt(durable.p50_ms)} ms, p99 ${fmt(durable.p99_ms)} ms`);
console.log(`  throughput share ${Math.round(share * 100)}% of the floor (target ≥ 25%); p99 ${ratio(lbot.p99_ms, floor.p99_ms)}× the floor's (target ≤ 3×)`);
console.log(`  serve resident memory: ${fmt(rssIdle)} MB idle, ${fmt(rssAfter)} MB after ${runsInAll} runs (target ≤ ${RSS_LIMIT_MB} MB)`);
report(
  'serve',
  [
    figure({
      name: 'serve.throughput',
      label: `serve runs/s, ${CONCURRENCY} concurrent`,
      unit: 'runs/s',
      value: lbot.per_s,
      baseline: floor.per_s,
      baselineLabel: 'bare fastify req/s',
      target: { of: 'share', op: '>=', limit: 0.25 },
    }),
    figure({
      name: 'serve.p99',
      label: `serve p99, ${CONCURRENCY} concurrent`,
      unit: 'ms',
      value: lbot.p99_ms,
      baseline: floor.p99_ms,
      baselineLabel: 'bare fastify p99',
      target: { of: 'ratio', op: '<=', limit: 3 },
    }),
    figure({
      name: 'serve.errors',
      label: 'serve failed requests',
      unit: 'requests',
      value: lbot.errors + more.errors,
      target: { of: 'value', op: '<=', limit: 0 },
    }),
    figure({
      name: 'serve.durable_floor',
      label: `least durable out-of-process host runs/s, ${CONCURRENCY} concurrent`,
      unit: 'runs/s',
      value: durable.per_s,
      baseline: floor.per_s,
      baselineLabel: 'bare fastify req/s',
    }),
    figure({ name: 'serve.rss_idle', label: 'serve resident memory, idle after one run', unit: 'MB', value: rssIdle }),
    figure({
      name: 'serve.rss_after',
      label: `serve resident memory after ${runsInAll} runs`,
      unit: 'MB',
      value: rssAfter,
      baseline: rssIdle,
      baselineLabel: 'idle',
      target: { of: 'value', op: '<=', limit: RSS_LIMIT_MB },
    }),
  ],
  { concurrency: CONCURRENCY, lbot, floor, durable, share, rss_mb: { idle: rssIdle, after: rssAfter, runs: runsInAll } },
);
