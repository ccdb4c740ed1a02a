// MCP benchmark (issue 5): the round trip of `tools.call` from a runner through lbot to server-everything's
// `echo`, against a direct SDK client call to the same server program, both measured in this run. Target:
// the lbot path at most 1.5× the direct one. Run after `npm run build`; BENCH_MCP_CALLS sets the sample size.
// Informational figures put the target in scale: the same direct client through a relay process that only
// forwards bytes, and through one that parses and re-encodes every line (bench/mcp-relay-child.mjs): what one
// more process in the path costs before it does any of a host's work. The target's figure is a fresh host's
// first calls, as `lbot run` makes them; the steady figures compare both sides again after STEADY_WARMUP
// more calls each, as a long-lived `lbot serve` and a warm server would have them.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parseConfig } from '../dist/core/config.js';
import { BindingSchema } from '../dist/core/protocol/binding.js';
import { EventEnvelopeSchema } from '../dist/core/protocol/event.js';
import { openLocalHost } from '../dist/runtime/local-host.js';
import { figure, fmt, median, percentile, ratio, report } from './stats.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const EVERYTHING = path.join(root, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const RELAY = path.join(root, 'bench', 'mcp-relay-child.mjs');
/** The server's command line, straight or through a relay process. */
const SERVER = {
  direct: [EVERYTHING, 'stdio'],
  bytes: [RELAY, 'bytes', process.execPath, EVERYTHING, 'stdio'],
  lines: [RELAY, 'lines', process.execPath, EVERYTHING, 'stdio'],
};
const CALLS = Number(process.env.BENCH_MCP_CALLS ?? 500);
const WARMUP = 50;
/** Untimed calls before the informational steady-state figure, in a host that has already made a run. */
const STEADY_WARMUP = 3000;
const TARGET = 1.5;
const deadline = setTimeout(() => {
  console.error(`mcp bench: gave up after 120 s`);
  process.exit(1);
}, 120_000);
deadline.unref();

const tmp = mkdtempSync(path.join(os.tmpdir(), 'lbot-bench-mcp-'));
const dataDir = path.join(tmp, 'data');
const pluginDir = path.join(tmp, 'plugins', 'mcp-loop');
mkdirSync(path.join(pluginDir, 'components', 'agent_runner'), { recursive: true });
mkdirSync(path.join(tmp, 'node_modules'));
symlinkSync(root, path.join(tmp, 'node_modules', 'lbot'), 'dir');
writeFileSync(path.join(tmp, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
writeFileSync(
  path.join(pluginDir, 'manifest.yaml'),
  'apiVersion: langbot/v1\nkind: Plugin\nmetadata: { author: bench, name: mcp-loop, version: 0.1.0 }\nspec:\n  components:\n    AgentRunner:\n      fromDirs: [{ path: components/agent_runner/ }]\nexecution:\n  node: { path: main.js }\n',
);
writeFileSync(
  path.join(pluginDir, 'components', 'agent_runner', 'default.yaml'),
  'apiVersion: langbot/v1\nkind: AgentRunner\nmetadata: { name: default }\nspec:\n  config: []\n  permissions: { tools: [detail, call] }\n',
);
// The runner times each tools.call itself, so only the round trip is measured.
writeFileSync(
  path.join(pluginDir, 'main.js'),
  `import { definePlugin, defineRunner } from 'lbot/sdk';
export default definePlugin({ runners: { default: defineRunner({ async *run(ctx, api) {
  const call = (i) => api.request('tools.call', { run_id: ctx.run_id, tool_name: 'echo', parameters: { message: 'ping ' + i } });
  const warmup = Number(ctx.config.warmup ?? ${WARMUP});
  for (let i = 0; i < warmup; i++) await call(i);
  const samples = [];
  for (let i = 0; i < ${CALLS}; i++) { const t = performance.now(); await call(i); samples.push(performance.now() - t); }
  yield { type: 'message.completed', data: { message: { role: 'assistant', content: JSON.stringify(samples) } } };
  yield { type: 'run.completed', data: {} };
} }) } });
`,
);

const directBefore = await directSamples(SERVER.direct, CALLS / 2);
const config = parseConfig({ mcp: { servers: [{ name: 'everything', command: ['node', EVERYTHING, 'stdio'] }] } }, 'bench config');
const warnings = [];
// The host as `lbot run` opens it: its writes grouped over the configured commit window.
const local = await openLocalHost({
  dataDir,
  pluginsDir: path.dirname(pluginDir),
  pluginDir,
  config,
  commitWindowMs: config.runs.commit_window_ms,
  warn: (m) => warnings.push(m),
});
let throughLbot;
let throughSteady;
try {
  /** One run of the loop runner through the host, after `warmup` untimed calls; resolves the runner's timings. */
  const timedRun = async (event_id, warmup) => {
    const binding = BindingSchema.parse({
      binding_id: 'bench',
      runner_id: 'plugin:bench/mcp-loop/default',
      runner_config: { warmup },
      resource_policy: { allowed_tool_names: ['echo'] },
    });
    const event = {
      event_id,
      event_type: 'message.received',
      source: 'api',
      conversation_id: 'c1',
      input: { text: 'go', contents: [{ type: 'text', text: 'go' }], attachments: [] },
      delivery: { surface: 'cli', supports_streaming: false },
    };
    let content = null;
    const outcome = await local.host.run({
      event: EventEnvelopeSchema.parse(event),
      binding,
      onDelivered: (item) => (content = item.message?.content ?? content),
    });
    if (outcome.status !== 'completed' || typeof content !== 'string')
      throw new Error(`the benchmark run ${outcome.status}: ${JSON.stringify(outcome.error)}; ${warnings.join('; ')}`);
    return JSON.parse(content);
  };
  // The figure with the target: a fresh host, as `lbot run` has it. Then the same loop again in that host after
  // STEADY_WARMUP more calls, as a long-lived `lbot serve` has it once its code is optimized (informational).
  throughLbot = await timedRun('bench-1', WARMUP);
  throughSteady = await timedRun('bench-2', STEADY_WARMUP);
} finally {
  await local.close();
}
const direct = [...directBefore, ...(await directSamples(SERVER.direct, CALLS / 2))];
// The relays after the lbot run, so the processes they start and end do not come before the figure with a target.
// The steady-state baseline: the direct client and its server warmed by as many calls as the lbot side's.
const directSteady = await directSamples(SERVER.direct, CALLS, WARMUP + CALLS + STEADY_WARMUP);
const viaBytesSteady = await directSamples(SERVER.bytes, CALLS, WARMUP + CALLS + STEADY_WARMUP);
const viaBytes = await directSamples(SERVER.bytes, CALLS);
const viaLines = await directSamples(SERVER.lines, CALLS);
rmSync(tmp, { recursive: true, force: true });

/** `n` timed SDK client calls, after `warmup` untimed ones, to a fresh server-everything process started with `args`. */
async function directSamples(args, n, warmup = WARMUP) {
  const client = new Client({ name: 'bench-direct', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' }));
  const samples = [];
  try {
    for (let i = 0; i < warmup; i++) await client.callTool({ name: 'echo', arguments: { message: `ping ${i}` } });
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await client.callTool({ name: 'echo', arguments: { message: `ping ${i}` } });
      samples.push(performance.now() - t);
    }
  } finally {
    await client.close();
  }
  return samples;
}

const result = {
  bench: 'mcp',
  calls: CALLS,
  lbot_median_ms: median(throughLbot),
  lbot_p95_ms: percentile(throughLbot, 95),
  steady_median_ms: median(throughSteady),
  direct_steady_median_ms: median(directSteady),
  relay_bytes_steady_median_ms: median(viaBytesSteady),
  direct_median_ms: median(direct),
  direct_p95_ms: percentile(direct, 95),
  relay_bytes_median_ms: median(viaBytes),
  relay_lines_median_ms: median(viaLines),
};
result.ratio = ratio(result.lbot_median_ms, result.direct_median_ms);
result.target = TARGET;
result.within_target = result.ratio <= TARGET;
console.log(`tools.call echo through lbot (runner → host → server-everything): median ${fmt(result.lbot_median_ms)} ms, p95 ${fmt(result.lbot_p95_ms)} ms`);
console.log(
  `the same in that host after ${STEADY_WARMUP} more calls: median ${fmt(result.steady_median_ms)} ms; the direct client after as many: median ${fmt(result.direct_steady_median_ms)} ms`,
);
console.log(`direct SDK client call to server-everything echo:               median ${fmt(result.direct_median_ms)} ms, p95 ${fmt(result.direct_p95_ms)} ms`);
console.log(
  `the direct client through a byte relay: median ${fmt(result.relay_bytes_median_ms)} ms; through a line relay: median ${fmt(result.relay_lines_median_ms)} ms`,
);
console.log(`ratio ${result.ratio}× (target ≤ ${TARGET}×)`);
report(
  'mcp',
  [
    figure({
      name: 'mcp.tools_call',
      label: 'tools.call echo via lbot, median',
      unit: 'ms',
      value: result.lbot_median_ms,
      baseline: result.direct_median_ms,
      baselineLabel: 'direct SDK client call',
      target: { of: 'ratio', op: '<=', limit: TARGET },
    }),
    figure({
      name: 'mcp.tools_call_steady',
      label: `tools.call echo via lbot, a second run in the same host after ${STEADY_WARMUP} untimed calls, median`,
      unit: 'ms',
      value: result.steady_median_ms,
      baseline: result.direct_steady_median_ms,
      baselineLabel: 'direct SDK client call after as many calls',
    }),
    figure({
      name: 'mcp.relay_bytes',
      label: 'direct SDK client call through a process forwarding bytes, median',
      unit: 'ms',
      value: result.relay_bytes_median_ms,
      baseline: result.direct_median_ms,
      baselineLabel: 'direct SDK client call',
    }),
    figure({
      name: 'mcp.relay_bytes_steady',
      label: `direct SDK client call through a process forwarding bytes, after ${STEADY_WARMUP} more calls, median`,
      unit: 'ms',
      value: result.relay_bytes_steady_median_ms,
      baseline: result.direct_steady_median_ms,
      baselineLabel: 'direct SDK client call after as many calls',
    }),
    figure({
      name: 'mcp.relay_lines',
      label: 'direct SDK client call through a process parsing and re-encoding each line, median',
      unit: 'ms',
      value: result.relay_lines_median_ms,
      baseline: result.direct_median_ms,
      baselineLabel: 'direct SDK client call',
    }),
  ],
  result,
);
