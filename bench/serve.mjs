// `lbot serve` under load (issue 6): POST /v1/runs?wait=1 with the echo runner at a fixed concurrency over
// loopback, against a bare fastify handler answering a body of the same size from this same process (the
// floor). Bounded in count and time; reports runs/s and p50/p99 latency.
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, cpSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { figure, fmt, percentile, ratio, report } from './stats.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const COUNT = Number(process.env.BENCH_REQUESTS ?? 3000);
const MAX_MS = Number(process.env.BENCH_MAX_MS ?? 30_000);
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

/** Fires COUNT requests with CONCURRENCY in flight, stopping early after MAX_MS. */
async function load(send) {
  const latencies = [];
  let next = 0;
  let errors = 0;
  const deadline = Date.now() + MAX_MS;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < COUNT && Date.now() < deadline) {
        next++;
        const t = performance.now();
        const ok = await send().catch(() => false);
        if (ok) latencies.push(performance.now() - t);
        else errors++;
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  return { done: latencies.length, errors, per_s: Math.round(latencies.length / secs), p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99) };
}

const tmp = mkdtempSync(path.join(os.tmpdir(), 'lbot-bench-serve-'));
const plugins = path.join(tmp, 'plugins');
cpSync(path.join(root, 'fixtures', 'runners', 'echo'), path.join(plugins, 'echo'), { recursive: true });
// Each request is a new event in a conversation of its own, like many chats at once: one conversation's events
// run one at a time (run_policy enqueue) and a redelivered event_id is answered from its first run.
let sent = 0;
const nextBody = () => {
  const n = sent++;
  return JSON.stringify({ event: { ...event, event_id: `bench-${n}`, conversation_id: `bench-conv-${n}` }, runner_id: 'plugin:acme/echo/default' });
};
const serve = spawn(
  process.execPath,
  [path.join(root, 'bin', 'lbot.js'), '--data-dir', path.join(tmp, 'data'), '--plugins', plugins, '--json', 'serve', '--port', '0'],
  {
    env: { ...process.env, LBOT_API_TOKEN: 'bench-token', LBOT__SERVE__MAX_CONCURRENT_RUNS: '256', LBOT__SERVE__MAX_RUNS_PER_PLUGIN: '256' },
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
const ready = await new Promise((resolve) => createInterface({ input: serve.stdout }).once('line', (l) => resolve(JSON.parse(l))));
const headers = { authorization: 'Bearer bench-token', 'content-type': 'application/json' };
const lbotSend = async () => {
  const res = await post(`${ready.url}/v1/runs?wait=1`, headers, nextBody());
  return res.status === 200 && JSON.parse(res.text).status === 'completed';
};
await lbotSend(); // warm the plugin process
const lbot = await load(lbotSend);
serve.kill('SIGTERM');
await new Promise((r) => serve.once('exit', r));

const sample = JSON.stringify({ run_id: '00000000-0000-4000-8000-000000000000', status: 'completed', error: null, reply: 'ping' });
const app = Fastify({ logger: false });
app.post('/v1/runs', async () => sample);
await app.listen({ host: '127.0.0.1', port: 0 });
const floorUrl = `http://127.0.0.1:${app.server.address().port}/v1/runs`;
const floorBody = JSON.stringify({ event, runner_id: 'plugin:acme/echo/default' });
const floor = await load(async () => (await post(floorUrl, headers, floorBody)).status === 200);
await app.close();
agent.destroy();
rmSync(tmp, { recursive: true, force: true });

const share = ratio(lbot.per_s, floor.per_s);
console.log(`serve benchmark, ${CONCURRENCY} concurrent, up to ${COUNT} requests (client in this process)`);
console.log(`  lbot serve (echo run per request): ${lbot.per_s} runs/s, p50 ${fmt(lbot.p50_ms)} ms, p99 ${fmt(lbot.p99_ms)} ms, errors ${lbot.errors}`);
console.log(`  bare fastify (floor):              ${floor.per_s} req/s, p50 ${fmt(floor.p50_ms)} ms, p99 ${fmt(floor.p99_ms)} ms`);
console.log(`  throughput share ${Math.round(share * 100)}% of the floor (target ≥ 25%); p99 ${fmt(lbot.p99_ms)} ms (target ≤ 25 ms)`);
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
    figure({ name: 'serve.errors', label: 'serve failed requests', unit: 'requests', value: lbot.errors, target: { of: 'value', op: '<=', limit: 0 } }),
  ],
  { concurrency: CONCURRENCY, lbot, floor, share },
);
