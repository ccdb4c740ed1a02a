// The conformance catalogue (runner-protocol.md §12, acceptance AC-178/AC-179): named checks that
// judge the evidence of one plugin, each with a status and the evidence behind it.
import { parseRunnerId } from '../protocol/runner-id.js';
import { RESULT_TYPES, TERMINAL_RESULT_TYPES } from '../protocol/results.js';
import { isRecord } from '../json.js';
import type { Evidence, ProbeRun } from './evidence.js';
import { AGENT_CHECKS } from './agent-checks.js';
import { blocked, crashed, cutShort, dataOf, fail, label, na, noRuns, pass, textOf, type CheckResult, type CheckSpec } from './judge.js';

export type { CheckResult, CheckStatus, Severity } from './judge.js';

const ID_PART = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const MESSAGE_PROBES = new Set(['message', 'message_no_stream', 'join', 'friend']);
const NON_MESSAGE_PROBES = new Set(['join', 'friend']);

function apiCheck(e: Evidence, pick: (r: ProbeRun, call: ProbeRun['api'][number]) => boolean, what: string) {
  const why = noRuns(e);
  if (why) return blocked(why);
  const bad = e.runs.flatMap((r) =>
    r.api
      .filter((c) => pick(r, c))
      .map((c) =>
        `${label(r)}: ${c.action} ${c.resource ?? ''} → ${c.code ?? c.decision}${c.as_run_id !== r.run_id ? ` (claimed run_id ${JSON.stringify(c.as_run_id)})` : ''}`.replace(
          '  ',
          ' ',
        ),
      ),
  );
  const total = e.runs.reduce((n, r) => n + r.api.length, 0);
  return bad.length > 0 ? fail(`${bad.length} ${what}: ${bad.slice(0, 5).join('; ')}`) : pass(`${total} API call(s) in the probe runs, none ${what}`);
}

export const CHECKS: readonly CheckSpec[] = [
  {
    id: 'manifest.valid',
    title: 'manifest.yaml parses and matches the plugin schema',
    severity: 'error',
    judge: (e) => (e.files.manifestError ? fail(e.files.manifestError) : pass(`plugin ${e.files.identity ?? '?'} loaded from ${e.files.dir}`)),
  },
  {
    id: 'components.valid',
    title: 'every runner component YAML is valid and at least one runner is declared',
    severity: 'error',
    judge: (e) => {
      if (e.files.manifestError) return blocked('manifest.yaml did not load');
      if (e.files.componentWarnings.length > 0) return fail(e.files.componentWarnings.join('; '));
      if (e.files.runners.length === 0) return fail('the plugin declares no runner (spec.components.AgentRunner.fromDirs holds no AgentRunner YAML)');
      const noted = e.files.setAside.length > 0 ? `; set aside: ${e.files.setAside.join('; ')}` : '';
      return pass(`${e.files.runners.length} runner(s): ${e.files.runners.map((r) => r.runner_name).join(', ')}${noted}`);
    },
  },
  {
    id: 'runner.id_format',
    title: 'runner ids are plugin:author/plugin/runner with plain segments',
    severity: 'error',
    judge: (e) => {
      if (e.files.runners.length === 0) return blocked('no runner was loaded');
      const bad: string[] = [];
      for (const r of e.files.runners) {
        const parts = parseRunnerId(r.id);
        if (!parts) bad.push(`${r.id} does not parse`);
        else
          for (const p of [parts.plugin_author, parts.plugin_name, parts.runner_name])
            if (!ID_PART.test(p)) bad.push(`${r.id}: segment ${JSON.stringify(p)} must match ${ID_PART.source}`);
      }
      return bad.length ? fail(bad.join('; ')) : pass(e.files.runners.map((r) => r.id).join(', '));
    },
  },
  {
    id: 'initialize.handshake',
    title: 'the plugin process starts and answers initialize with its own identity',
    severity: 'error',
    judge: (e) => {
      if (!e.handshake) return blocked('the plugin was not started (manifest or components invalid)');
      return e.handshake.ok ? pass(`initialize answered in ${Math.round(e.handshake.ms)} ms`) : fail(`${e.handshake.code}: ${e.handshake.message}`);
    },
  },
  {
    id: 'run.terminal_result',
    title: 'every run ends with run.completed or run.failed',
    severity: 'error',
    judge: (e) => {
      const why = noRuns(e);
      if (why) return blocked(why);
      // A crash on a non-message event is events.non_message's finding.
      const judged = e.runs.filter((r) => MESSAGE_PROBES.has(r.probe) && !cutShort(r) && !(NON_MESSAGE_PROBES.has(r.probe) && crashed(r)));
      if (judged.length === 0) return blocked('every probe run was cut short (see stdout.protocol_only and results.well_formed)');
      const terminal = (r: ProbeRun) => r.results.some((x) => x.type !== null && (TERMINAL_RESULT_TYPES as readonly string[]).includes(x.type));
      // A terminal result sent only once the host cancelled the run at its deadline does not count:
      // an ordinary message must be answered within its deadline.
      const overran = judged.filter((r) => terminal(r) && r.status === 'timed_out');
      const missing = judged.filter((r) => !terminal(r));
      if (missing.length === 0 && overran.length === 0) return pass(`${judged.length} probe run(s) each sent a terminal result`);
      return fail(
        [
          ...overran.map((r) => `${label(r)}: ran past its ${r.deadlineS} s deadline and finished only after the host cancelled it`),
          ...missing.map((r) => {
            const how = crashed(r)
              ? `the plugin process died (${r.error?.message.split('\n')[0] ?? ''})`
              : r.status === 'timed_out'
                ? `did not finish within ${r.deadlineS} s`
                : `answered run with status ${r.reply ?? 'none'}`;
            return `${label(r)}: ${how} and sent no run.completed or run.failed (results: ${r.results.map((x) => x.type ?? '?').join(', ') || 'none'})`;
          }),
        ].join('; '),
      );
    },
  },
  {
    id: 'run.answered',
    title: 'a run that sent its terminal result is answered (lbot: the run reply; LangBot: the end of the run_agent stream)',
    severity: 'error',
    judge: (e) => {
      const why = noRuns(e);
      if (why) return blocked(why);
      // Cancel and deadline runs are judged by cancel.honoured and deadline.honoured.
      const judged = e.runs.filter(
        (r) =>
          r.probe !== 'cancel' &&
          r.probe !== 'deadline' &&
          !cutShort(r) &&
          !crashed(r) &&
          !r.killed &&
          r.status !== 'timed_out' &&
          r.results.some((x) => x.type !== null && (TERMINAL_RESULT_TYPES as readonly string[]).includes(x.type)),
      );
      if (judged.length === 0) return blocked('no probe run sent a terminal result (see run.terminal_result)');
      const unanswered = judged.filter((r) => r.reply === null);
      return unanswered.length === 0
        ? pass(`${judged.length} probe run(s) answered after their terminal result`)
        : fail(
            `${unanswered.map(label).join('; ')}: sent a terminal result but never answered the run within the ${e.graceMs} ms grace period (the host waited, then let the run go)`,
          );
    },
  },
  {
    id: 'stdout.protocol_only',
    title: 'stdout carries only JSON-RPC lines (logs go to stderr)',
    severity: 'error',
    judge: (e) => {
      if (e.handshake && !e.handshake.ok && e.handshake.code === 'runner.protocol_error') return fail(e.handshake.message);
      const why = noRuns(e);
      if (why) return blocked(why);
      const corrupted = e.runs.filter((r) => r.channel?.code === 'runner.protocol_error');
      return corrupted[0]
        ? fail(`${label(corrupted[0])}: ${corrupted[0].channel?.message ?? ''}`)
        : pass(`${e.runs.length} probe run(s) without a non-protocol stdout line`);
    },
  },
  {
    id: 'results.well_formed',
    title: 'results parse: known envelope, message and chunk shapes, matching run_id',
    severity: 'error',
    judge: (e) => {
      const why = noRuns(e);
      if (why) return blocked(why);
      const bad = e.runs.filter((r) => r.channel === null && r.error?.code === 'runner.protocol_error');
      const stray = e.strayResults ?? [];
      const found = [...bad.map((r) => `${label(r)}: ${r.error?.message ?? ''}`), ...stray.slice(0, 5)];
      if (stray.length > 5) found.push(`${stray.length - 5} more run/result(s) for foreign run ids`);
      return found.length ? fail(found.join('; ')) : pass(`${e.runs.reduce((n, r) => n + r.results.length, 0)} result(s) accepted`);
    },
  },
  {
    id: 'results.declared',
    title: 'result types are protocol types and match the declared capabilities',
    severity: 'warning',
    judge: (e) => {
      const why = noRuns(e);
      if (why) return blocked(why);
      const caps = new Map(e.files.runners.map((r) => [r.id, r.capabilities]));
      const found = new Set<string>();
      for (const r of e.runs) {
        const c = caps.get(r.runner_id);
        for (const { type } of r.results) {
          if (type === null) continue;
          if (!(RESULT_TYPES as readonly string[]).includes(type)) found.add(`${type} (not a protocol result type)`);
          else if (type === 'message.delta' && c && !c.streaming) found.add('message.delta (capabilities.streaming is false)');
          else if (type.startsWith('tool.call.') && c && !c.tool_calling) found.add(`${type} (capabilities.tool_calling is false)`);
        }
      }
      return found.size ? fail(`undeclared result types: ${[...found].join(', ')}`) : pass('every result type is declared');
    },
  },
  {
    id: 'cancel.honoured',
    title: `the runner answers run within the cancel grace period after run/cancel`,
    severity: 'error',
    judge: (e) => {
      const why = noRuns(e);
      if (why) return blocked(why);
      const runs = e.runs.filter((r) => r.probe === 'cancel');
      if (runs.length === 0) return blocked('the cancel probe did not run');
      const bad: string[] = [];
      const good: string[] = [];
      for (const r of runs) {
        if (r.channel) return blocked(`${label(r)} was cut short: ${r.channel.code}`);
        if (!r.cancelSent) good.push(`${label(r)} finished before the cancel was sent`);
        else if (r.cancelToReplyMs !== null && r.cancelToReplyMs <= e.graceMs)
          good.push(`${label(r)} answered ${Math.round(r.cancelToReplyMs)} ms after run/cancel (status ${r.reply ?? '?'})`);
        else
          bad.push(`${label(r)}: no answer within the ${e.graceMs} ms grace period after run/cancel${r.killed ? '; the host killed the process group' : ''}`);
      }
      return bad.length ? fail(bad.join('; ')) : pass(good.join('; '));
    },
  },
  {
    id: 'deadline.honoured',
    title: 'the runner stops at runtime.deadline_at (or within the grace period after it)',
    severity: 'error',
    judge: (e) => {
      const why = noRuns(e);
      if (why) return blocked(why);
      const runs = e.runs.filter((r) => r.probe === 'deadline');
      if (runs.length === 0) return blocked('the deadline probe did not run');
      const bad: string[] = [];
      const good: string[] = [];
      for (const r of runs) {
        if (r.channel) return blocked(`${label(r)} was cut short: ${r.channel.code}`);
        if (r.status !== 'timed_out') good.push(`${label(r)} ended (${r.status}) within its ${r.deadlineS} s deadline`);
        else if (r.cancelToReplyMs !== null && r.cancelToReplyMs <= e.graceMs)
          good.push(`${label(r)} stopped ${Math.round(r.cancelToReplyMs)} ms after its deadline`);
        else bad.push(`${label(r)}: still running ${e.graceMs} ms after its ${r.deadlineS} s deadline${r.killed ? '; the host killed the process group' : ''}`);
      }
      return bad.length ? fail(bad.join('; ')) : pass(good.join('; '));
    },
  },
  {
    id: 'api.authorized',
    title: 'no API call of the probe runs was refused as unauthorized',
    severity: 'error',
    judge: (e) => apiCheck(e, (r, c) => c.as_run_id === r.run_id && c.decision === 'denied' && c.code === 'unauthorized', 'refused as unauthorized'),
  },
  {
    id: 'api.own_run_id',
    title: "API calls carry the calling run's own run_id",
    severity: 'error',
    judge: (e) => apiCheck(e, (r, c) => c.as_run_id !== r.run_id, 'made with another run_id'),
  },
  {
    id: 'state.within_limits',
    title: 'state and storage writes stay within the value limits',
    severity: 'error',
    judge: (e) => {
      const why = noRuns(e);
      if (why) return blocked(why);
      const writes = e.runs.flatMap((r) => r.api.filter((c) => c.action === 'state.set' || c.action === 'storage.set').map((c) => ({ r, c })));
      const updates = e.runs.flatMap((r) => r.results.filter((x) => x.type === 'state.updated').map(() => r));
      const bad = [
        ...writes
          .filter(({ c }) => c.decision === 'denied' && (c.code === 'payload_too_large' || c.code === 'invalid_argument'))
          .map(({ r, c }) => `${label(r)}: ${c.action} ${c.resource ?? ''} → ${c.code ?? ''}`),
        ...e.runs.flatMap((r) => r.warnings.filter((w) => w.startsWith('state.updated') && w.includes('not written')).map((w) => `${label(r)}: ${w}`)),
      ];
      if (bad.length) return fail(bad.join('; '));
      if (writes.length + updates.length === 0) return na('the probe runs made no state or storage writes');
      return pass(`${writes.length + updates.length} write(s) within limits`);
    },
  },
  {
    id: 'events.non_message',
    title: 'non-message events (member joined, friend request) are handled without crashing',
    severity: 'error',
    judge: (e) => {
      const why = noRuns(e);
      if (why) return blocked(why);
      const runs = e.runs.filter((r) => NON_MESSAGE_PROBES.has(r.probe) && !cutShort(r));
      if (runs.length === 0) return blocked('the non-message probes did not run to an end (see stdout.protocol_only and results.well_formed)');
      const died = runs.filter(crashed);
      if (died.length) return fail(died.map((r) => `${label(r)}: ${r.error?.message ?? r.channel?.message ?? ''}`).join('; '));
      return pass(runs.map((r) => `${label(r)}: ${r.status}${r.error ? ` (${r.error.code})` : ''}`).join('; '));
    },
  },
  {
    id: 'streaming.consistent',
    title: 'message.delta chunks are cumulative, match the final message, and appear only on streaming surfaces',
    severity: 'error',
    judge: (e) => {
      const why = noRuns(e);
      if (why) return blocked(why);
      const bad: string[] = [];
      let streamed = 0;
      for (const r of e.runs) {
        const deltas = r.results.filter((x) => x.type === 'message.delta').map((x) => textOf(dataOf(x.raw).chunk) ?? '');
        if (deltas.length === 0) continue;
        streamed++;
        if (r.probe === 'message_no_stream') {
          bad.push(`${label(r)}: ${deltas.length} message.delta on a surface with supports_streaming false`);
          continue;
        }
        for (let i = 1; i < deltas.length; i++) {
          const prev = deltas[i - 1] ?? '';
          if (!(deltas[i] ?? '').startsWith(prev)) {
            bad.push(
              `${label(r)}: delta ${i + 1} ${JSON.stringify((deltas[i] ?? '').slice(0, 40))} does not extend delta ${i} ${JSON.stringify(prev.slice(0, 40))} (chunks must be cumulative)`,
            );
            break;
          }
        }
        const final = r.results.filter((x) => x.type === 'message.completed' || (x.type === 'run.completed' && isRecord(dataOf(x.raw).message))).at(-1);
        const last = deltas.at(-1) ?? '';
        const finalText = final ? textOf(dataOf(final.raw).message) : null;
        if (finalText !== null && !finalText.startsWith(last))
          bad.push(
            `${label(r)}: final message ${JSON.stringify(finalText.slice(0, 40))} does not continue the last delta ${JSON.stringify(last.slice(0, 40))}`,
          );
      }
      if (bad.length) return fail(bad.join('; '));
      return streamed ? pass(`${streamed} streamed run(s) consistent`) : na('the runner streamed no message.delta in the probe runs');
    },
  },
  {
    id: 'shutdown.idle',
    title: 'an idle plugin exits on its own after shutdown (no SIGTERM/SIGKILL needed)',
    severity: 'error',
    judge: (e) => {
      if (!e.shutdown) return blocked(e.handshake?.ok ? 'no live plugin process was left to shut down' : 'the plugin never started');
      const s = e.shutdown;
      const how = s.signal ? `was killed by ${s.signal}` : `exited with status ${s.code ?? '?'}`;
      return s.exitedBySelf
        ? pass(`${how} ${Math.round(s.ms)} ms after shutdown`)
        : fail(`${how} ${Math.round(s.ms)} ms after shutdown; it must exit after answering shutdown or when stdin closes`);
    },
  },
  {
    id: 'process.no_leftovers',
    title: 'no process the plugin started keeps running after the plugin exits',
    severity: 'error',
    judge: (e) => {
      if (!e.shutdown) return blocked(e.handshake?.ok ? 'no live plugin process was left to shut down' : 'the plugin never started');
      if (e.leftovers === undefined || e.leftovers === null) return blocked('the process tree could not be observed (no /proc)');
      const left = e.leftovers;
      if (left.length === 0) return pass('no process of the plugin outlived it');
      const shown = left.slice(0, 5).map((p) => `pid ${p.pid} (${p.command.slice(0, 80)})`);
      return fail(
        `${left.length} process(es) the plugin started were still running after it exited: ${shown.join(', ')}${left.length > 5 ? ', …' : ''} (killed by the suite); a runner must stop what it starts before it answers run`,
      );
    },
  },
];

/** Every check: the protocol checks, then the agent checks (N/A unless `--agent`). */
export const CATALOGUE: readonly CheckSpec[] = [...CHECKS, ...AGENT_CHECKS];

/** Judges the evidence with every check of the catalogue, in catalogue order. */
export function runChecks(e: Evidence): CheckResult[] {
  return CATALOGUE.map((c) => ({ id: c.id, title: c.title, severity: c.severity, ...c.judge(e) }));
}
