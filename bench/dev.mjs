// Developer-loop benchmark (issue 7): (a) time from saving a runner's main.js to the first successful run on
// the new code under `lbot dev` (median of 20 edits; target ≤ 300 ms), against the floor of starting the
// same plugin process cold (spawn + initialize) measured in this run; (b) `lbot runner test` on the echo
// fixture. Run after `npm run build`. Bounded: every wait has a deadline. Edits are BENCH_EDIT_GAP_MS apart
// (default 1 s, a person saving), which leaves `dev` time to put the next plugin process on standby.
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { figure, fmt, median, percentile, ratio, report } from './stats.mjs';
import { startDev } from '../dist/runtime/dev/session.js';
import { openConfigFile } from '../dist/core/stores/config-file.js';
import { runConformance } from '../dist/runtime/conformance/suite.js';
import { createPluginLauncher } from '../dist/runtime/plugins/launcher.js';
import { parseEnvelope } from '../dist/core/host/event-input.js';
import { defaultCliBinding } from '../dist/core/protocol/binding.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const EDITS = Number(process.env.BENCH_EDITS ?? 20);
const EDIT_GAP_MS = Number(process.env.BENCH_EDIT_GAP_MS ?? 1000);
const TARGET_MS = 300;
const EDIT_DEADLINE_MS = 15_000;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'lbot-bench-dev-'));
const pluginsDir = path.join(tmp, 'plugins');
const hot = path.join(pluginsDir, 'hot');
const dataDir = path.join(tmp, 'data');

mkdirSync(path.join(tmp, 'node_modules'), { recursive: true });
symlinkSync(root, path.join(tmp, 'node_modules', 'lbot'), 'dir');
writeFileSync(path.join(tmp, 'package.json'), '{"type":"module"}\n');
cpSync(path.join(root, 'fixtures', 'runners', 'echo'), hot, { recursive: true });
writeFileSync(path.join(hot, 'manifest.yaml'), readFileSync(path.join(hot, 'manifest.yaml'), 'utf8').replace('name: echo', 'name: hot'));
mkdirSync(dataDir);
const mainJs = (reply) =>
  `import { completed, definePlugin, defineRunner, message } from 'lbot/sdk';\nexport default definePlugin({ runners: { default: defineRunner({ async *run() { yield message(${JSON.stringify(reply)}); yield completed(); } }) } });\n`;
writeFileSync(path.join(hot, 'main.js'), mainJs('v0'));

const event = parseEnvelope(JSON.parse(readFileSync(path.join(root, 'fixtures', 'events', 'msg.json'), 'utf8')), 'msg.json', 1 << 20);
const binding = defaultCliBinding('plugin:acme/hot/default');
const withDeadline = (promise, ms, what) =>
  Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms).unref())]);

let session;
const saveToRun = [];
try {
  session = await startDev({ dataDir, dir: pluginsDir, configFile: openConfigFile(dataDir), port: 0, watch: true, warn: () => undefined });
  const host = session.serve.local.host;
  for (let i = 1; i <= EDITS; i++) {
    const reply = `v${i}`;
    const t0 = performance.now();
    writeFileSync(path.join(hot, 'main.js'), mainJs(reply));
    await withDeadline(
      (async () => {
        for (;;) {
          const reloaded = new Promise((resolve) => {
            const off = session.bus.subscribe((e) => {
              if (e.type === 'dev.reloaded' || e.type === 'dev.reload_failed') {
                off();
                resolve();
              }
            });
          });
          const outcome = await host.run({ event, binding });
          if (outcome.status === 'completed' && outcome.reply === reply) return;
          await reloaded;
        }
      })(),
      EDIT_DEADLINE_MS,
      `edit ${i}`,
    );
    saveToRun.push(performance.now() - t0);
    await session.settled();
    await new Promise((r) => setTimeout(r, EDIT_GAP_MS));
  }
} finally {
  await session?.close();
}

// Floor: the same plugin started cold (spawn + initialize), then stopped.
const launcher = createPluginLauncher();
const starts = [];
for (let i = 0; i < 10; i++) {
  const t0 = performance.now();
  const conn = await withDeadline(
    launcher.start({ identity: 'acme/hot', dir: hot, execution: { node: { path: 'main.js' } }, env: {} }, async () => null),
    20_000,
    'plugin start',
  );
  starts.push(performance.now() - t0);
  await conn.close();
}

const t0 = performance.now();
const conformance = await withDeadline(runConformance({ dir: path.join(root, 'fixtures', 'runners', 'echo'), strict: false }), 120_000, 'runner test');
const runnerTestMs = performance.now() - t0;
rmSync(tmp, { recursive: true, force: true });

const result = {
  bench: 'dev',
  edits: saveToRun.length,
  edit_gap_ms: EDIT_GAP_MS,
  save_to_run_ms: {
    median: Number(fmt(median(saveToRun))),
    p90: Number(fmt(percentile(saveToRun, 90))),
    min: Number(fmt(Math.min(...saveToRun))),
    max: Number(fmt(Math.max(...saveToRun))),
  },
  target_ms: TARGET_MS,
  target_met: median(saveToRun) <= TARGET_MS,
  plugin_cold_start_ms: Number(fmt(median(starts))),
  save_to_run_vs_cold_start: ratio(median(saveToRun), median(starts)),
  runner_test_echo_ms: Number(fmt(runnerTestMs)),
  runner_test_echo_ok: conformance.ok,
  load_average_1m: Number(os.loadavg()[0].toFixed(2)),
};
console.log(
  `save → first run on new code: median ${result.save_to_run_ms.median} ms (p90 ${result.save_to_run_ms.p90} ms, target ≤ ${TARGET_MS} ms${result.target_met ? ', met' : ', not met'}); cold plugin start ${result.plugin_cold_start_ms} ms (ratio ${result.save_to_run_vs_cold_start})`,
);
console.log(`lbot runner test fixtures/runners/echo: ${result.runner_test_echo_ms} ms (${conformance.ok ? 'pass' : 'FAIL'})`);
report(
  'dev',
  [
    figure({
      name: 'dev.save_to_run',
      label: 'save → first run on the new code, median',
      unit: 'ms',
      value: median(saveToRun),
      baseline: median(starts),
      baselineLabel: 'cold plugin start',
      target: { of: 'value', op: '<=', limit: TARGET_MS },
    }),
    figure({ name: 'dev.runner_test', label: 'lbot runner test, echo fixture', unit: 'ms', value: runnerTestMs, note: conformance.ok ? 'pass' : 'FAIL' }),
  ],
  result,
);
