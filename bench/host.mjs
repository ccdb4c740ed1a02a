// Host benchmarks (issue 2): (a) `lbot run` of one event with the echo runner against the floor of starting
// two bare `node -e 0` processes; (b) proxy round trip of state.get from a warm runner against a bare JSON-RPC
// echo over the same kind of pipes. Both baselines are measured in this same run.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { PLUGIN_NODE_FLAGS } from '../dist/runtime/plugins/spawn.js';
import { figure, fmt, median, percentile, ratio, report } from './stats.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = path.join(root, 'bin', 'lbot.js');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'lbot-bench-host-'));
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const CALLS = Number(process.env.BENCH_CALLS ?? 2000);

function timeIt(fn) {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

// (a) lbot run vs two bare node starts
const event = path.join(root, 'fixtures', 'events', 'msg.json');
const echo = path.join(root, 'fixtures', 'runners', 'echo');
const runOnce = () => {
  const r = spawnSync(process.execPath, [bin, '--data-dir', path.join(tmp, 'data'), 'run', '--event', event, '--plugin', echo], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`lbot run failed: ${r.stderr}`);
};
runOnce(); // creates the database once, like any later run
const lbotTimes = [];
const floorTimes = [];
for (let i = 0; i < RUNS; i++) {
  lbotTimes.push(timeIt(runOnce));
  floorTimes.push(
    timeIt(() => {
      spawnSync(process.execPath, ['-e', '0']);
      spawnSync(process.execPath, ['-e', '0']);
    }),
  );
}
const a = { lbot_run_ms: median(lbotTimes), floor_ms: median(floorTimes) };
a.ratio = ratio(a.lbot_run_ms, a.floor_ms);

// (b) state.get round trip from a warm runner vs a bare JSON-RPC echo. Load on a shared machine drifts over
// seconds, so the two sides alternate in rounds (one run of the state-loop runner, then one bare child, each
// making BENCH_CALLS calls) and each p50 is taken over all its rounds. The bare child runs with the V8 flags
// lbot gives a runner, so the floor is as fast as the same VM settings make it.
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const cfg = path.join(tmp, 'cfg.json');
writeFileSync(cfg, JSON.stringify({ calls: CALLS }));
const lbotRound = () => {
  const r = spawnSync(
    process.execPath,
    [
      bin,
      '--data-dir',
      path.join(tmp, 'data'),
      '--json',
      'run',
      '--event',
      event,
      '--plugin',
      path.join(root, 'bench', 'runners', 'state-loop'),
      '--config',
      cfg,
    ],
    { encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  if (r.status !== 0) throw new Error(`state-loop run failed: ${r.stderr}`);
  const line = r.stdout.split('\n').find((l) => l.includes('message.completed'));
  return JSON.parse(JSON.parse(line).data.message.content);
};
const bareRound = () =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...PLUGIN_NODE_FLAGS, path.join(root, 'bench', 'bare-echo-child.mjs'), String(CALLS)], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    createInterface({ input: child.stdout }).on('line', (l) => {
      const msg = JSON.parse(l);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { value: null } })}\n`);
    });
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(err)) : reject(new Error(err))));
  });
const lbotSamples = [];
const bareSamples = [];
for (let round = 0; round < ROUNDS; round++) {
  lbotSamples.push(...lbotRound());
  bareSamples.push(...(await bareRound()));
}
const b = {
  lbot_p50_ms: median(lbotSamples),
  lbot_p99_ms: percentile(lbotSamples, 99),
  bare_p50_ms: median(bareSamples),
  bare_p99_ms: percentile(bareSamples, 99),
};
b.ratio = ratio(b.lbot_p50_ms, b.bare_p50_ms);
b.rounds = ROUNDS;

rmSync(tmp, { recursive: true, force: true });
console.log('host benchmarks');
console.log(
  `  (a) lbot run, one event, echo runner: median ${fmt(a.lbot_run_ms)} ms; floor (2× node -e 0): ${fmt(a.floor_ms)} ms; ratio ${a.ratio}× (target ≤ 3×)`,
);
console.log(
  `  (b) state.get round trip, warm runner: p50 ${fmt(b.lbot_p50_ms)} ms p99 ${fmt(b.lbot_p99_ms)} ms; bare JSON-RPC echo p50 ${fmt(b.bare_p50_ms)} ms; ratio ${b.ratio}× (target ≤ 2×; ${ROUNDS} alternating rounds of ${CALLS} calls)`,
);
report(
  'host',
  [
    figure({
      name: 'host.run',
      label: 'lbot run, one event, echo runner',
      unit: 'ms',
      value: a.lbot_run_ms,
      baseline: a.floor_ms,
      baselineLabel: '2× node -e 0',
      target: { of: 'ratio', op: '<=', limit: 3 },
      stretch: { limit: 2 },
    }),
    figure({
      name: 'host.proxy',
      label: 'state.get round trip p50, warm runner',
      unit: 'ms',
      value: b.lbot_p50_ms,
      baseline: b.bare_p50_ms,
      baselineLabel: 'bare JSON-RPC echo on the same pipes',
      target: { of: 'ratio', op: '<=', limit: 2 },
    }),
  ],
  { run: a, proxy: b },
);
