// Model benchmark (issue 14): host overhead of models.invoke. A warm runner times sequential models.invoke
// calls through lbot (JSON-RPC to the host, grants, audit, the openai provider) against the fake upstream
// (`lbot model fake-server`, zero delay); the baseline is a direct call to the same server with the same SDK,
// measured in this same run. Both sides are fresh processes that make the same untimed warm-up calls before
// the timed ones (agent-direct-child.mjs for the direct side): a baseline in the long-lived bench process would
// be warmer at every round than the host, which starts anew, and the ratio would count JIT warm-up as overhead.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { helperJson, startServer } from './json-lines.mjs';
import { figure, fmt, median, percentile, ratio, report } from './stats.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = path.join(root, 'bin', 'lbot.js');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'lbot-bench-models-'));
const CALLS = Number(process.env.BENCH_CALLS ?? 500);
const KEY = 'sk-bench';
/** Untimed calls each side makes first, in its fresh process. */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 20);

const script = path.join(tmp, 'script.json');
writeFileSync(script, JSON.stringify({ api_key: KEY }));
const server = await startServer([bin, '--json', 'model', 'fake-server', '--port', '0', '--script', script]);
const baseURL = server.ready.openai_base_url;

try {
  // The machine may be shared: load drifts over seconds, so the two sides are sampled in alternating rounds
  // (a block of direct calls, then a run of the same number of calls through the host) and each p50 is taken
  // over all its rounds. Sequential phases would let a load swing between them pass for host overhead.
  const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
  const perRound = Math.max(1, Math.ceil(CALLS / ROUNDS));

  // Baseline: the same SDK, the same server, the same request the host's provider sends (the model name set by
  // the host, no extra arguments), from a fresh process with the runner's warm-up.
  const request = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] };
  const bodies = path.join(tmp, 'bodies.json');
  writeFileSync(bodies, JSON.stringify(Array.from({ length: perRound }, () => request)));
  const directRound = () => helperJson(path.join(root, 'bench', 'agent-direct-child.mjs'), [baseURL, KEY, bodies, String(WARMUP), 'plain']);

  const dataDir = path.join(tmp, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
  writeFileSync(
    path.join(dataDir, 'lbot.config.json'),
    JSON.stringify({ models: [{ id: 'bench', provider: 'openai', base_url: baseURL, model: 'gpt-4o-mini', api_key: KEY, max_retries: 0 }] }),
  );
  const cfg = path.join(tmp, 'cfg.json');
  writeFileSync(cfg, JSON.stringify({ calls: perRound, warmup: WARMUP, model: 'bench' }));
  const event = path.join(root, 'fixtures', 'events', 'msg.json');
  // One run: the runner warms up (WARMUP calls), then times perRound sequential calls.
  const hostRound = async () => {
    const run = await new Promise((resolve) => {
      const child = spawn(
        process.execPath,
        [bin, '--data-dir', dataDir, '--json', 'run', '--event', event, '--plugin', path.join(root, 'bench', 'runners', 'model-loop'), '--config', cfg],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      child.on('exit', (status) => resolve({ status, out, err }));
    });
    if (run.status !== 0) throw new Error(`model-loop run failed: ${run.err}`);
    const line = run.out.split('\n').find((l) => l.includes('message.completed'));
    return JSON.parse(JSON.parse(line).data.message.content);
  };

  const direct = [];
  const viaHost = [];
  for (let r = 0; r < ROUNDS; r++) {
    direct.push(...(await directRound()));
    viaHost.push(...(await hostRound()));
    if (process.env.BENCH_DEBUG)
      console.error(`round ${r}: direct p50 ${fmt(median(direct.slice(-perRound)))} host p50 ${fmt(median(viaHost.slice(-perRound)))}`);
  }

  const result = {
    lbot_p50_ms: median(viaHost),
    lbot_p99_ms: percentile(viaHost, 99),
    direct_p50_ms: median(direct),
    direct_p99_ms: percentile(direct, 99),
  };
  result.ratio = ratio(result.lbot_p50_ms, result.direct_p50_ms);
  console.log('model benchmarks');
  result.rounds = ROUNDS;
  console.log(
    `  models.invoke through the host, warm runner, fake upstream: p50 ${fmt(result.lbot_p50_ms)} ms p99 ${fmt(result.lbot_p99_ms)} ms; direct SDK call p50 ${fmt(result.direct_p50_ms)} ms; ratio ${result.ratio}× (target ≤ 1.3×; ${ROUNDS} alternating rounds)`,
  );
  report(
    'models',
    [
      figure({
        name: 'models.invoke',
        label: 'models.invoke p50, warm runner, fake upstream',
        unit: 'ms',
        value: result.lbot_p50_ms,
        baseline: result.direct_p50_ms,
        baselineLabel: 'direct SDK call',
        target: { of: 'ratio', op: '<=', limit: 1.3 },
      }),
    ],
    { invoke: result },
  );
} finally {
  await server.stop();
  rmSync(tmp, { recursive: true, force: true });
}
