// Streaming under `lbot serve` (issue 21, item 6): the numbers a release reports for a chat agent, as Dify does for
// its own. The bundled local agent answers every run through the fake model server (in this process: a 40-word
// reply streamed 8 characters an event, CHUNK_DELAY_MS apart); CONCURRENCY clients each POST /v1/runs and read the run's
// results as server-sent events. Reported: SSE events delivered per second and runs per second, the time from
// the POST to the first `message.delta` (time to first event) at p50/p90/p95, and to the run's end. The yardstick is
// the fake model's own time to its first text chunk at the same concurrency, from a direct SDK client in a
// process of its own (stream-direct-child.mjs) sending the agent's first request body. No target: these are
// reported per release (docs/benchmarks.md).
import http from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { helperJson, startServer } from './json-lines.mjs';
import { figure, fmt, inFlight, percentile, report } from './stats.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const { startFakeModelServer } = await import(path.join(root, 'dist', 'runtime', 'models', 'fake-server.js'));
const { FakeScriptSchema } = await import(path.join(root, 'dist', 'runtime', 'models', 'fake-server-script.js'));
const CONCURRENCY = Number(process.env.BENCH_STREAM_CONCURRENCY ?? 8);
const RUNS = Number(process.env.BENCH_STREAM_RUNS ?? 400);
const WARMUP = Number(process.env.BENCH_STREAM_WARMUP ?? 50);
/** The fake model's pause between two streamed events: a reply takes about 30 × this, as a real model streams. */
const CHUNK_DELAY_MS = Number(process.env.BENCH_STREAM_CHUNK_DELAY_MS ?? 2);
const KEY = 'sk-bench-stream';
const TOKEN = 'bench-stream-token';
const REPLY = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
const deadline = setTimeout(() => {
  console.error('stream bench: gave up after 240 s');
  process.exit(1);
}, 240_000);
deadline.unref();

const model = await startFakeModelServer(
  FakeScriptSchema.parse({ api_key: KEY, steps: [{ content: REPLY, times: 1_000_000 }], chunk_size: 8, chunk_delay_ms: CHUNK_DELAY_MS }),
);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'lbot-bench-stream-'));
const dataDir = path.join(tmp, 'data');
mkdirSync(dataDir, { mode: 0o700 });
writeFileSync(
  path.join(dataDir, 'lbot.config.json'),
  JSON.stringify({ models: [{ id: 'bench', provider: 'openai', base_url: model.openaiBaseUrl, model: 'gpt-4o-mini', api_key: KEY, max_retries: 0 }] }),
);
const agent = new http.Agent({ keepAlive: true, maxSockets: 2 * CONCURRENCY });

const headers = { authorization: `Bearer ${TOKEN}` };

/** POST /v1/runs; resolves the run id. */
function startRun(url, n) {
  const body = JSON.stringify({
    event: {
      event_id: `stream-${n}`,
      event_type: 'message.received',
      source: 'api',
      conversation_id: `stream-conv-${n}`,
      actor: { actor_type: 'user', actor_id: 'u1', actor_name: 'Ann' },
      input: { text: 'tell me something', contents: [{ type: 'text', text: 'tell me something' }], attachments: [] },
      delivery: { surface: 'api', supports_streaming: true },
    },
    runner_id: 'plugin:langbot/local-agent/default',
    config: { model: { primary: 'bench', fallbacks: [] } },
  });
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/v1/runs`,
      { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => (res.statusCode === 202 ? resolve(JSON.parse(text).run_id) : reject(new Error(`POST /v1/runs: ${res.statusCode} ${text}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Reads a run's results as SSE; resolves when the stream ends, with when the first delta came and how many events. */
function readEvents(url, runId, t0) {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}/v1/runs/${runId}/results`, { agent, headers: { ...headers, accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`GET results: ${res.statusCode}`));
      let buf = '';
      let first = null;
      let events = 0;
      let status = null;
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        buf += chunk;
        let end;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const type = /^event: (.+)$/m.exec(block)?.[1];
          if (!type) continue;
          events++;
          if (type === 'message.delta' && first === null) first = performance.now() - t0;
          if (type === 'run.summary') status = JSON.parse(/^data: (.+)$/m.exec(block)?.[1] ?? '{}').status;
        }
      });
      res.on('end', () => resolve({ first, end: performance.now() - t0, events, status }));
    });
    req.on('error', reject);
  });
}

let sent = 0;
/** Runs `count` runs, CONCURRENCY at a time. */
async function load(url, count) {
  const runs = [];
  const secs = await inFlight(CONCURRENCY, count, async () => {
    const t = performance.now();
    const runId = await startRun(url, sent++);
    const r = await readEvents(url, runId, t);
    if (r.status !== 'completed' || r.first === null) throw new Error(`run ${runId} ended ${r.status} with ${r.first === null ? 'no' : 'a'} delta`);
    runs.push(r);
  });
  return { runs, secs };
}

try {
  const serve = await startServer([path.join(root, 'bin', 'lbot.js'), '--data-dir', dataDir, '--json', 'serve', '--port', '0'], {
    env: { ...process.env, LBOT_API_TOKEN: TOKEN, LBOT__SERVE__MAX_CONCURRENT_RUNS: '256', LBOT__SERVE__MAX_RUNS_PER_PLUGIN: '256' },
    stderr: 'ignore',
  });
  let timed;
  try {
    await load(serve.url, WARMUP);
    timed = await load(serve.url, RUNS);
  } finally {
    await serve.stop();
  }
  const body = model.requests.find((q) => q.path === '/v1/chat/completions')?.body;
  if (!body) throw new Error('the fake model saw no chat request');
  // The fake model's own time to first chunk: the agent's first request body, straight from a client process.
  const file = path.join(tmp, 'body.json');
  writeFileSync(file, JSON.stringify(body));
  const floor = await helperJson(path.join(root, 'bench', 'stream-direct-child.mjs'), [
    model.openaiBaseUrl,
    KEY,
    file,
    String(RUNS),
    String(CONCURRENCY),
    String(WARMUP),
  ]);

  const firsts = timed.runs.map((r) => r.first);
  const ends = timed.runs.map((r) => r.end);
  const events = timed.runs.reduce((n, r) => n + r.events, 0);
  const result = {
    concurrency: CONCURRENCY,
    runs: timed.runs.length,
    runs_per_s: timed.runs.length / timed.secs,
    events_per_s: events / timed.secs,
    events_per_run: events / timed.runs.length,
    first_event_ms: { p50: percentile(firsts, 50), p90: percentile(firsts, 90), p95: percentile(firsts, 95) },
    run_end_ms: { p50: percentile(ends, 50), p95: percentile(ends, 95) },
    model_first_chunk_ms: { p50: percentile(floor, 50), p90: percentile(floor, 90), p95: percentile(floor, 95) },
  };
  console.log(
    `stream benchmark: lbot serve, local agent, fake model (${CHUNK_DELAY_MS} ms between events), ${CONCURRENCY} clients, ${RUNS} runs after ${WARMUP}`,
  );
  console.log(
    `  ${Math.round(result.events_per_s)} events/s, ${Math.round(result.runs_per_s)} runs/s (${fmt(result.events_per_run)} SSE events a run); run end p50 ${fmt(result.run_end_ms.p50)} ms p95 ${fmt(result.run_end_ms.p95)} ms`,
  );
  console.log(
    `  time to first event p50 ${fmt(result.first_event_ms.p50)} ms, p90 ${fmt(result.first_event_ms.p90)} ms, p95 ${fmt(result.first_event_ms.p95)} ms; the model's own first chunk p50 ${fmt(result.model_first_chunk_ms.p50)} ms, p95 ${fmt(result.model_first_chunk_ms.p95)} ms`,
  );
  const ttfe = (p) =>
    figure({
      name: `stream.first_event_p${p}`,
      label: `time to first event p${p}, serve SSE, local agent`,
      unit: 'ms',
      value: result.first_event_ms[`p${p}`],
      baseline: result.model_first_chunk_ms[`p${p}`],
      baselineLabel: "the model's own first chunk",
    });
  report(
    'stream',
    [
      figure({ name: 'stream.events_per_s', label: `SSE events/s, ${CONCURRENCY} clients`, unit: 'events/s', value: result.events_per_s }),
      figure({ name: 'stream.runs_per_s', label: `streamed runs/s, ${CONCURRENCY} clients`, unit: 'runs/s', value: result.runs_per_s }),
      ttfe(50),
      ttfe(90),
      ttfe(95),
    ],
    result,
  );
} finally {
  agent.destroy();
  await model.close();
  rmSync(tmp, { recursive: true, force: true });
}
