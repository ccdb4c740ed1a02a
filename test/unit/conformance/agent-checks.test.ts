// The agent checks on synthetic evidence: off without --agent, and each way a tool-using runner can go
// wrong (result not fed back, loop past the cap, a refusal that ends the run) fails exactly its check.
import { describe, expect, it } from 'vitest';
import { runChecks, type CheckResult } from '../../../src/core/conformance/checks.js';
import { LOOKUP_CALL_ID, UNGRANTED_CALL_ID, UNKNOWN_CALL_ID, type AgentProbeName } from '../../../src/core/conformance/agent-plan.js';
import type { AgentProbeRun, Evidence, ProbeName, ProbeRun } from '../../../src/core/conformance/evidence.js';

const RUNNER = 'plugin:acme/agent/default';
const NONCE = 'conformance-abc123';
const caps = {
  streaming: false,
  tool_calling: true,
  knowledge_retrieval: false,
  multimodal_input: false,
  event_context: true,
  platform_api: false,
  interrupt: false,
  stateful_session: false,
};
const done = [
  { type: 'message.completed', raw: { type: 'message.completed', data: { message: { role: 'assistant', content: 'done' } } } },
  { type: 'run.completed', raw: { type: 'run.completed', data: {} } },
];

function probeRun(probe: ProbeName): ProbeRun {
  return {
    probe,
    runner_id: RUNNER,
    run_id: `run-${probe}`,
    status: 'completed',
    error: null,
    results: done,
    reply: 'completed',
    cancelToReplyMs: probe === 'cancel' ? 5 : null,
    cancelSent: probe === 'cancel',
    killed: false,
    channel: null,
    api: [],
    warnings: [],
    deadlineS: 10,
  };
}

const user = { role: 'user', content: 'look it up' };
const asked = (ids: string[]) => ({
  role: 'assistant',
  content: '',
  tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'x', arguments: '{}' } })),
});
const tool = (id: string, content: string) => ({ role: 'tool', tool_call_id: id, content });

function agentRun(probe: AgentProbeName, over: Partial<AgentProbeRun> = {}): AgentProbeRun {
  const second: Record<AgentProbeName, unknown> = {
    agent_tool_result: { messages: [user, asked([LOOKUP_CALL_ID]), tool(LOOKUP_CALL_ID, JSON.stringify({ value: NONCE }))] },
    agent_iteration_cap: { messages: [user] },
    agent_refused_tool: {
      messages: [user, asked([UNGRANTED_CALL_ID, UNKNOWN_CALL_ID]), tool(UNGRANTED_CALL_ID, 'err: refused'), tool(UNKNOWN_CALL_ID, 'err: unknown')],
    },
  };
  return {
    ...probeRun('message'),
    probe,
    run_id: `run-${probe}`,
    modelRequests: probe === 'agent_iteration_cap' ? [{ messages: [user] }, second[probe], second[probe]] : [{ messages: [user] }, second[probe]],
    toolCalls: probe === 'agent_refused_tool' ? [] : [{ name: 'conformance_lookup', parameters: { key: 'conformance' } }],
    nonce: NONCE,
    cap: probe === 'agent_iteration_cap' ? 2 : null,
    ...over,
  };
}

const AGENT: AgentProbeName[] = ['agent_tool_result', 'agent_iteration_cap', 'agent_refused_tool'];

function evidence(edit: (r: AgentProbeRun) => AgentProbeRun = (r) => r, agent = true): Evidence {
  return {
    files: {
      dir: '/p/agent',
      manifestError: null,
      componentWarnings: [],
      setAside: [],
      identity: 'acme/agent',
      runners: [{ id: RUNNER, runner_name: 'default', capabilities: caps }],
    },
    handshake: { ok: true, ms: 100 },
    probesBlocked: null,
    runs: (['message', 'message_no_stream', 'join', 'friend', 'cancel', 'deadline'] as const).map(probeRun),
    shutdown: { exitedBySelf: true, ms: 10, code: 0, signal: null },
    graceMs: 2000,
    ...(agent ? { agent: { unfit: [], runs: AGENT.map((p) => edit(agentRun(p))), blocked: null } } : {}),
  };
}

const agentResults = (e: Evidence) => runChecks(e).filter((c) => c.id.startsWith('agent.'));
const failing = (results: CheckResult[]) => results.filter((c) => c.status === 'fail').map((c) => c.id);
const evidenceOf = (results: CheckResult[], id: string) => results.find((c) => c.id === id)?.evidence ?? '';

describe('agent checks', () => {
  it('are N/A unless asked for, and pass for a runner that behaves', () => {
    expect(agentResults(evidence(undefined, false)).map((c) => c.status)).toEqual(['n/a', 'n/a', 'n/a']);
    const r = agentResults(evidence());
    expect(r.map((c) => [c.id, c.status])).toEqual([
      ['agent.tool_result', 'pass'],
      ['agent.iteration_cap', 'pass'],
      ['agent.refused_tool', 'pass'],
    ]);
  });

  it('a tool result not sent back fails agent.tool_result only, naming what was missing', () => {
    const noAnswer = agentResults(
      evidence((r) => (r.probe === 'agent_tool_result' ? { ...r, modelRequests: [{ messages: [user] }, { messages: [user] }] } : r)),
    );
    expect(failing(noAnswer)).toEqual(['agent.tool_result']);
    expect(evidenceOf(noAnswer, 'agent.tool_result')).toContain(`no \`tool\` message answering ${LOOKUP_CALL_ID}`);
    const wrong = agentResults(
      evidence((r) =>
        r.probe === 'agent_tool_result' ? { ...r, modelRequests: [{ messages: [user] }, { messages: [user, tool(LOOKUP_CALL_ID, 'ok')] }] } : r,
      ),
    );
    expect(evidenceOf(wrong, 'agent.tool_result')).toContain(`${NONCE} missing from "ok"`);
    const neverRan = agentResults(evidence((r) => (r.probe === 'agent_tool_result' ? { ...r, toolCalls: [], modelRequests: [{ messages: [user] }] } : r)));
    expect(evidenceOf(neverRan, 'agent.tool_result')).toContain('the tool never ran');
  });

  it('a loop past the cap, or run.failed at the cap, fails agent.iteration_cap only', () => {
    const many = Array.from({ length: 9 }, () => ({ messages: [user] }));
    const past = agentResults(evidence((r) => (r.probe === 'agent_iteration_cap' ? { ...r, modelRequests: many } : r)));
    expect(failing(past)).toEqual(['agent.iteration_cap']);
    expect(evidenceOf(past, 'agent.iteration_cap')).toContain('9 model requests with max-tool-iterations 2');
    const failedAtCap = agentResults(
      evidence((r) =>
        r.probe === 'agent_iteration_cap'
          ? {
              ...r,
              status: 'failed',
              results: [{ type: 'run.failed', raw: { type: 'run.failed', data: { code: 'runner.error', error: 'too many tool calls' } } }],
            }
          : r,
      ),
    );
    expect(evidenceOf(failedAtCap, 'agent.iteration_cap')).toContain('ended run.failed (runner.error');
    const hung = agentResults(evidence((r) => (r.probe === 'agent_iteration_cap' ? { ...r, status: 'timed_out', results: [] } : r)));
    expect(evidenceOf(hung, 'agent.iteration_cap')).toContain('did not finish within 10 s');
  });

  it('a refusal that ends the run, or a process that dies on it, fails agent.refused_tool only', () => {
    const ended = agentResults(
      evidence((r) =>
        r.probe === 'agent_refused_tool'
          ? {
              ...r,
              status: 'failed',
              error: { code: 'runner.exception', message: 'tools.call: unauthorized' },
              modelRequests: [{ messages: [user] }],
              results: [{ type: 'run.failed', raw: { type: 'run.failed', data: {} } }],
            }
          : r,
      ),
    );
    expect(failing(ended)).toEqual(['agent.refused_tool']);
    expect(evidenceOf(ended, 'agent.refused_tool')).toContain('the model never got the refusals');
    const died = agentResults(
      evidence((r) => (r.probe === 'agent_refused_tool' ? { ...r, status: 'failed', results: [], channel: { code: 'runner.crashed', message: 'exit 1' } } : r)),
    );
    expect(evidenceOf(died, 'agent.refused_tool')).toContain('the plugin process died');
  });

  it('a runner without model or tool permissions fails every agent check with the reason', () => {
    const e = evidence();
    e.agent = { unfit: [{ runner_id: RUNNER, reason: 'declares no tools: [call] permission' }], runs: [], blocked: null };
    const r = agentResults(e);
    expect(failing(r)).toEqual(['agent.tool_result', 'agent.iteration_cap', 'agent.refused_tool']);
    expect(evidenceOf(r, 'agent.tool_result')).toContain('declares no tools: [call] permission');
  });
});
