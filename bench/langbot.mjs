// LangBot-wire benchmarks (issue 17): (a) `lbot run` of one event on a LangBot SDK plugin
// (fixtures/runners/langbot-wire, the stdlib stand-in) against the same echo behaviour on lbot's own
// protocol (fixtures/runners/python-echo), cold (one process per run) and warm (one event of a sequence);
// (b) one `count_tokens` round trip from the plugin against a `state_get` round trip on the same wire and
// against a bare Python↔Node line echo over pipes. Every baseline is measured in this same run.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { figure, fmt, median, percentile, ratio, report, skip } from './stats.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = path.join(root, 'bin', 'lbot.js');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'lbot-bench-langbot-'));
const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const SEQ = Number(process.env.BENCH_SEQ ?? 21);
const CALLS = Number(process.env.BENCH_CALLS ?? 500);
const python = process.env.LBOT_LANGBOT_PYTHON ?? 'python3';

if (spawnSync(python, ['--version']).status !== 0) {
  skip('langbot', `${python} is missing`);
  process.exit(0);
}

const dataDir = path.join(tmp, 'data');
const WIRE = path.join(root, 'fixtures', 'runners', 'langbot-wire');
const LBOT = path.join(root, 'fixtures', 'runners', 'python-echo');

const message = (i, text) => ({
  event_id: `ev-${i}`,
  event_type: 'message.received',
  source: 'api',
  conversation_id: 'c1',
  actor: { actor_type: 'user', actor_id: 'u1' },
  input: { text, contents: [{ type: 'text', text }], attachments: [] },
  delivery: { surface: 'cli', supports_streaming: true },
});
const one = path.join(tmp, 'one.json');
writeFileSync(one, JSON.stringify(message(0, 'ping')));
const seq = path.join(tmp, 'seq.json');
writeFileSync(seq, JSON.stringify(Array.from({ length: SEQ }, (_, i) => message(i + 1, 'ping'))));

function lbot(args, dir = dataDir) {
  const t = performance.now();
  const r = spawnSync(process.execPath, [bin, '--data-dir', dir, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`lbot ${args.join(' ')} failed: ${r.stderr}`);
  return { ms, stdout: r.stdout };
}
const runOn = (plugin, event) => lbot(['run', '--event', event, '--plugin', plugin]).ms;

// (a) cold: one lbot run per event; warm: the per-event cost inside a sequence on one plugin process.
runOn(WIRE, one); // the database, and Python's bytecode caches, exist before timing
runOn(LBOT, one);
const cold = { wire: [], lbot: [] };
const warm = { wire: [], lbot: [] };
for (let i = 0; i < RUNS; i++) {
  cold.wire.push(runOn(WIRE, one));
  cold.lbot.push(runOn(LBOT, one));
}
for (let i = 0; i < Math.max(3, Math.floor(RUNS / 3)); i++) {
  for (const [name, plugin] of [
    ['wire', WIRE],
    ['lbot', LBOT],
  ]) {
    const whole = runOn(plugin, seq);
    const single = runOn(plugin, one);
    warm[name].push((whole - single) / (SEQ - 1));
  }
}
const a = {
  cold_wire_ms: median(cold.wire),
  cold_lbot_ms: median(cold.lbot),
  warm_wire_ms: median(warm.wire),
  warm_lbot_ms: median(warm.lbot),
};
a.cold_ratio = ratio(a.cold_wire_ms, a.cold_lbot_ms);
a.warm_ratio = ratio(a.warm_wire_ms, a.warm_lbot_ms);

// (b) count_tokens and state_get round trips from inside one LangBot run; a bare Python↔Node echo.
const tokensDir = path.join(tmp, 'tokens');
mkdirSync(tokensDir);
writeFileSync(path.join(tokensDir, 'lbot.config.json'), JSON.stringify({ models: [{ id: 'm-fake', provider: 'fake', reply: 'x', tokenizer: 'o200k_base' }] }));
const cfg = path.join(tmp, 'cfg.json');
writeFileSync(cfg, JSON.stringify({ model: { primary: 'm-fake', fallbacks: [] } }));
function samplesOf(action) {
  const ev = path.join(tmp, `${action}.json`);
  writeFileSync(ev, JSON.stringify(message(0, `bench ${action} ${CALLS}`)));
  const { stdout } = lbot(['--json', 'run', '--event', ev, '--plugin', WIRE, '--config', cfg], tokensDir);
  const line = stdout.split('\n').find((l) => l.includes('"message.completed"'));
  return JSON.parse(JSON.parse(line).data.message.content).slice(10); // the first calls warm up the tokenizer
}
const tokens = samplesOf('count_tokens');
const state = samplesOf('state_get');

const BARE = `
import json, sys, time
out, inp, samples = sys.stdout, sys.stdin, []
for i in range(${CALLS}):
    t = time.perf_counter()
    out.write(json.dumps({"seq_id": i, "action": "state_get", "data": {"run_id": "r", "scope": "conversation", "key": "k"}}) + "\\n"); out.flush()
    inp.readline()
    samples.append((time.perf_counter() - t) * 1000)
sys.stderr.write(json.dumps(samples[10:]))
`;
const bare = await new Promise((resolve, reject) => {
  const child = spawn(python, ['-c', BARE], { stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  createInterface({ input: child.stdout }).on('line', (l) => {
    const msg = JSON.parse(l);
    child.stdin.write(`${JSON.stringify({ seq_id: msg.seq_id, code: 0, message: 'success', data: { value: null }, chunk_status: 'end' })}\n`);
  });
  child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(err)) : reject(new Error(err))));
});
const b = {
  count_tokens_p50_ms: median(tokens),
  count_tokens_p99_ms: percentile(tokens, 99),
  state_get_p50_ms: median(state),
  bare_p50_ms: median(bare),
};
b.vs_state_get = ratio(b.count_tokens_p50_ms, b.state_get_p50_ms);
b.vs_bare = ratio(b.count_tokens_p50_ms, b.bare_p50_ms);

rmSync(tmp, { recursive: true, force: true });
console.log('langbot wire benchmarks');
console.log(
  `  (a) one echo event, LangBot wire vs lbot protocol (both Python): cold lbot run ${fmt(a.cold_wire_ms)} vs ${fmt(a.cold_lbot_ms)} ms, ratio ${a.cold_ratio}×; warm per event ${fmt(a.warm_wire_ms)} vs ${fmt(a.warm_lbot_ms)} ms, ratio ${a.warm_ratio}×`,
);
console.log(
  `  (b) count_tokens round trip: p50 ${fmt(b.count_tokens_p50_ms)} ms p99 ${fmt(b.count_tokens_p99_ms)} ms; state_get on the same wire p50 ${fmt(b.state_get_p50_ms)} ms (${b.vs_state_get}×); bare Python↔Node line echo p50 ${fmt(b.bare_p50_ms)} ms (${b.vs_bare}×)`,
);
report(
  'langbot',
  [
    figure({
      name: 'langbot.cold_run',
      label: 'lbot run, LangBot wire plugin, cold',
      unit: 'ms',
      value: a.cold_wire_ms,
      baseline: a.cold_lbot_ms,
      baselineLabel: "lbot's own protocol, Python",
    }),
    figure({
      name: 'langbot.warm_event',
      label: 'one event in a sequence, LangBot wire',
      unit: 'ms',
      value: a.warm_wire_ms,
      baseline: a.warm_lbot_ms,
      baselineLabel: "lbot's own protocol, Python",
    }),
    figure({
      name: 'langbot.count_tokens',
      label: 'count_tokens round trip p50',
      unit: 'ms',
      value: b.count_tokens_p50_ms,
      baseline: b.bare_p50_ms,
      baselineLabel: 'bare Python↔Node line echo',
    }),
  ],
  { run: a, count_tokens: b },
);
