// Plugin isolation benchmarks (issue 12), sandbox against none in this same run, interleaved: (a) cold
// start of the echo plugin (spawn until `initialize` answered) through the launcher; (b) `lbot run` of one
// event with the echo runner (target ≤ 1.3×).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { figure, fmt, median, ratio, report, skip } from './stats.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = path.join(root, 'bin', 'lbot.js');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'lbot-bench-isolation-'));
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const { createPluginLauncher } = await import(path.join(root, 'dist', 'runtime', 'plugins', 'launcher.js'));
const { PluginSandbox } = await import(path.join(root, 'dist', 'runtime', 'plugins', 'sandbox.js'));
const { ConfigSchema } = await import(path.join(root, 'dist', 'core', 'config.js'));

const echo = path.join(root, 'fixtures', 'runners', 'echo');
const spec = { identity: 'acme/echo', dir: echo, execution: { node: { path: 'main.js' } }, env: {} };
const limits = ConfigSchema.parse({}).plugins.limits;
const sandbox = new PluginSandbox({
  mode: 'sandbox',
  dataDir: path.join(tmp, 'data'),
  limits,
  hidden: [path.join(tmp, 'data')],
  warn: (m) => console.error(m),
});
const available = sandbox.grant(false);
if (available.isolation !== 'sandbox') {
  skip('isolation', `runner plugins cannot be sandboxed here (${available.reason})`);
  process.exit(0);
}
const launchers = { sandbox: createPluginLauncher({ sandbox }), none: createPluginLauncher() };

async function coldStart(launcher) {
  const t = performance.now();
  const conn = await launcher.start(spec, async () => ({}));
  const ms = performance.now() - t;
  await conn.close();
  return ms;
}

const event = path.join(root, 'fixtures', 'events', 'msg.json');
const runOnce = (mode) => {
  const t = performance.now();
  const r = spawnSync(process.execPath, [bin, '--data-dir', path.join(tmp, `data-${mode}`), 'run', '--event', event, '--plugin', echo], {
    encoding: 'utf8',
    env: { ...process.env, LBOT__PLUGINS__ISOLATION: mode },
  });
  if (r.status !== 0) throw new Error(`lbot run (${mode}) failed: ${r.stderr}`);
  return performance.now() - t;
};

const starts = { sandbox: [], none: [] };
const runs = { sandbox: [], none: [] };
// Warm-up: the database of each data dir, the sandbox probe, the file cache.
await coldStart(launchers.sandbox);
await coldStart(launchers.none);
runOnce('sandbox');
runOnce('none');
for (let i = 0; i < RUNS; i++) {
  for (const mode of i % 2 === 0 ? ['sandbox', 'none'] : ['none', 'sandbox']) {
    starts[mode].push(await coldStart(launchers[mode]));
    runs[mode].push(runOnce(mode));
  }
}
const a = { sandbox_ms: median(starts.sandbox), none_ms: median(starts.none) };
a.ratio = ratio(a.sandbox_ms, a.none_ms);
const b = { sandbox_ms: median(runs.sandbox), none_ms: median(runs.none) };
b.ratio = ratio(b.sandbox_ms, b.none_ms);
rmSync(tmp, { recursive: true, force: true });
console.log(`isolation benchmarks (${available.reason})`);
console.log(`  (a) cold plugin start, echo: sandbox median ${fmt(a.sandbox_ms)} ms; none ${fmt(a.none_ms)} ms; ratio ${a.ratio}×`);
console.log(`  (b) lbot run, one event, echo runner: sandbox median ${fmt(b.sandbox_ms)} ms; none ${fmt(b.none_ms)} ms; ratio ${b.ratio}× (target ≤ 1.3×)`);
report(
  'isolation',
  [
    figure({
      name: 'isolation.run',
      label: 'lbot run, one event, sandboxed plugin',
      unit: 'ms',
      value: b.sandbox_ms,
      baseline: b.none_ms,
      baselineLabel: 'the same run without isolation',
      target: { of: 'ratio', op: '<=', limit: 1.3 },
    }),
    figure({
      name: 'isolation.start',
      label: 'cold plugin start, sandboxed',
      unit: 'ms',
      value: a.sandbox_ms,
      baseline: a.none_ms,
      baselineLabel: 'without isolation',
    }),
  ],
  { start: a, run: b },
);
