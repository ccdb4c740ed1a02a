// The agent checks of `lbot runner test --agent` (docs/writing-a-runner.md): a tool-using runner, driven by
// the fake model server, feeds a tool's result back, ends at its iteration cap, and survives a refused tool.
import { isRecord } from '../json.js';
import { TERMINAL_RESULT_TYPES } from '../protocol/results.js';
import {
  HARD_TOOL_ROUNDS,
  LOOKUP_CALL_ID,
  LOOKUP_TOOL,
  UNGRANTED_CALL_ID,
  UNGRANTED_TOOL,
  UNKNOWN_CALL_ID,
  UNKNOWN_TOOL,
  type AgentProbeName,
} from './agent-plan.js';
import type { AgentProbeRun, Evidence } from './evidence.js';
import { blocked, crashed, cutShort, dataOf, fail, label, na, noRuns, pass, textOf, type CheckSpec } from './judge.js';

type Verdict = ReturnType<typeof pass> | ReturnType<typeof fail> | ReturnType<typeof blocked> | ReturnType<typeof na>;

const OFF = 'the agent checks were not asked for (pass --agent to hold a tool-using runner to them)';

/** The messages of one chat request body the fake model received. */
function messagesOf(body: unknown): Record<string, unknown>[] {
  return isRecord(body) && Array.isArray(body.messages) ? body.messages.filter(isRecord) : [];
}

/** The `tool` message of a request answering `call_id`, if any. */
function toolAnswer(body: unknown, call_id: string): Record<string, unknown> | undefined {
  return messagesOf(body).find((m) => m.role === 'tool' && m.tool_call_id === call_id);
}

function terminalOf(r: AgentProbeRun): { type: string; raw: unknown } | undefined {
  return r.results.find((x): x is { type: string; raw: unknown } => x.type !== null && (TERMINAL_RESULT_TYPES as readonly string[]).includes(x.type));
}

/** The last assistant text of the run: its last message.completed, or the message of run.completed. */
function finalText(r: AgentProbeRun): string {
  for (const x of [...r.results].reverse()) {
    if (x.type === 'message.completed' || x.type === 'run.completed') {
      const text = textOf(dataOf(x.raw).message);
      if (text) return text;
    }
  }
  return '';
}

const quote = (text: string, n = 80) => JSON.stringify(text.length > n ? `${text.slice(0, n)}…` : text);

/** Why the run says nothing about the rule: it died, was cut short, or never ended. */
function brokenRun(r: AgentProbeRun): string | null {
  if (crashed(r)) return `${label(r)}: the plugin process died (${(r.error?.message ?? r.channel?.message ?? '').split('\n')[0] ?? ''})`;
  if (cutShort(r)) return `${label(r)}: the run was cut short (${r.error?.code ?? r.channel?.code ?? ''}; see stdout.protocol_only and results.well_formed)`;
  if (!terminalOf(r)) {
    const how = r.status === 'timed_out' ? `did not finish within ${r.deadlineS} s` : `ended ${r.status}`;
    return `${label(r)}: ${how} without run.completed or run.failed after ${r.modelRequests.length} model request(s) (results: ${r.results.map((x) => x.type ?? '?').join(', ') || 'none'})`;
  }
  return null;
}

/** Applies `judge` to every run of `probe`, after the common reasons to block or fail. */
function judgeAgent(e: Evidence, probe: AgentProbeName, judge: (r: AgentProbeRun) => { ok: boolean; text: string }): Verdict {
  if (!e.agent) return na(OFF);
  const why = noRuns(e);
  if (why) return blocked(why);
  if (e.agent.blocked) return blocked(e.agent.blocked);
  const bad = e.agent.unfit.map((u) => `${u.runner_id}: ${u.reason}`);
  const good: string[] = [];
  const runs = e.agent.runs.filter((r) => r.probe === probe);
  if (runs.length === 0 && bad.length === 0) return blocked(`the ${probe} probe did not run`);
  for (const r of runs) {
    const broken = brokenRun(r);
    if (broken !== null) {
      bad.push(broken);
      continue;
    }
    const v = judge(r);
    const ended = r.error ? ` (the run ended ${r.status}: ${r.error.code}: ${quote(r.error.message.split('\n')[0] ?? '', 120)})` : '';
    (v.ok ? good : bad).push(`${label(r)}: ${v.text}${v.ok ? '' : ended}`);
  }
  return bad.length > 0 ? fail(bad.join('; ')) : pass(good.join('; '));
}

export const AGENT_CHECKS: readonly CheckSpec[] = [
  {
    id: 'agent.tool_result',
    title: 'a tool call the model asks for is executed and its result is sent back in the next model request',
    severity: 'error',
    judge: (e) =>
      judgeAgent(e, 'agent_tool_result', (r) => {
        if (!r.toolCalls.some((c) => c.name === LOOKUP_TOOL)) {
          const denied = r.api.filter((c) => c.action === 'tools.call' && c.decision !== 'allowed');
          return {
            ok: false,
            text: `the model asked for ${LOOKUP_TOOL} (call ${LOOKUP_CALL_ID}) but the tool never ran${denied.length ? ` (tools.call → ${denied.map((c) => c.code ?? c.decision).join(', ')})` : ': the runner made no tools.call for it'}`,
          };
        }
        const next = r.modelRequests[1];
        if (next === undefined) return { ok: false, text: `${LOOKUP_TOOL} ran, but the runner made no further model request to give the model its result` };
        const answer = toolAnswer(next, LOOKUP_CALL_ID);
        if (!answer) {
          const tools = messagesOf(next).filter((m) => m.role === 'tool').length;
          return {
            ok: false,
            text: `the model request after the tool call carries no \`tool\` message answering ${LOOKUP_CALL_ID} (${tools} tool message(s)): the runner ignores tool results`,
          };
        }
        const text = textOf(answer) ?? '';
        if (!text.includes(r.nonce))
          return {
            ok: false,
            text: `the \`tool\` message answering ${LOOKUP_CALL_ID} does not hold the tool's result (${r.nonce} missing from ${quote(text)})`,
          };
        return {
          ok: true,
          text: `the ${LOOKUP_TOOL} result reached model request 2 as the \`tool\` message answering ${LOOKUP_CALL_ID}; the run ended ${r.status}`,
        };
      }),
  },
  {
    id: 'agent.iteration_cap',
    title: 'a model that asks for tools on every turn meets the iteration cap: the run ends run.completed with a message',
    severity: 'error',
    judge: (e) =>
      judgeAgent(e, 'agent_iteration_cap', (r) => {
        const n = r.modelRequests.length;
        const bound = r.cap !== null ? r.cap + 2 : HARD_TOOL_ROUNDS + 1;
        const how =
          r.cap !== null ? `max-tool-iterations ${r.cap} (set by the check)` : `no max-tool-iterations declared, so at most ${HARD_TOOL_ROUNDS} rounds`;
        const terminal = terminalOf(r);
        if (terminal?.type === 'run.failed') {
          const d = dataOf(terminal.raw);
          return {
            ok: false,
            text: `the run ended run.failed (${typeof d.code === 'string' ? d.code : '?'}: ${quote(typeof d.error === 'string' ? d.error : '')}) after ${n} model request(s); reaching the cap must end run.completed with a message saying so`,
          };
        }
        if (n > bound) return { ok: false, text: `${n} model requests with ${how}: the cap did not stop the loop (at most ${bound} expected)` };
        const text = finalText(r);
        if (text === '') return { ok: false, text: `run.completed after ${n} model request(s) without a final message: tell the user the limit was reached` };
        return { ok: true, text: `run.completed after ${n} model request(s) with ${how}: ${quote(text)}` };
      }),
  },
  {
    id: 'agent.refused_tool',
    title: 'a call to a tool the run was not granted, or that does not exist, goes back to the model as a result; the run goes on',
    severity: 'error',
    judge: (e) =>
      judgeAgent(e, 'agent_refused_tool', (r) => {
        const next = r.modelRequests[1];
        const calls = [
          { id: UNGRANTED_CALL_ID, what: `${UNGRANTED_TOOL} (exists, not granted)` },
          { id: UNKNOWN_CALL_ID, what: `${UNKNOWN_TOOL} (no such tool)` },
        ];
        if (next === undefined)
          return {
            ok: false,
            text: `the model never got the refusals of ${calls.map((c) => c.what).join(' and ')} as tool results${r.error ? '' : ` (the run ended ${r.status})`}`,
          };
        const missing = calls.filter((c) => !toolAnswer(next, c.id));
        if (missing.length > 0)
          return {
            ok: false,
            text: `the model request after the refused calls has no \`tool\` message answering ${missing.map((c) => `${c.id} = ${c.what}`).join(', ')}`,
          };
        return { ok: true, text: `both refused calls went back to the model as tool results; the run ended ${r.status}` };
      }),
  },
];
