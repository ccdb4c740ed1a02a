// The agent probes of `lbot runner test --agent`: what the fake model asks for in each, the tools the probe
// host offers, and the call ids the agent checks look for. Pure data, shared by the driver and the checks.

export const AGENT_PROBES = ['agent_tool_result', 'agent_iteration_cap', 'agent_refused_tool'] as const;
export type AgentProbeName = (typeof AGENT_PROBES)[number];

/** The tool the probe runs are granted: it answers `{value: <nonce>, key}`. */
export const LOOKUP_TOOL = 'conformance_lookup';
/** A tool the probe host has but never grants (the host refuses a call to it). */
export const UNGRANTED_TOOL = 'conformance_ungranted';
/** A name no tool table has. */
export const UNKNOWN_TOOL = 'conformance_no_such_tool';

export const LOOKUP_CALL_ID = 'call_conformance_lookup';
export const UNGRANTED_CALL_ID = 'call_conformance_ungranted';
export const UNKNOWN_CALL_ID = 'call_conformance_unknown';

/** The `max-tool-iterations` the cap probe sets when the runner declares that config key. */
export const PROBE_TOOL_ITERATIONS = 2;
/** `max-tool-iterations` in a runner's config schema: the cap probe sets it. */
export const ITERATIONS_KEY = 'max-tool-iterations';
/** Rounds a runner without a configurable cap may take before the cap probe fails (the spec's hard cap, AC-224). */
export const HARD_TOOL_ROUNDS = 128;
/** How many times the fake model of the cap probe asks for a tool before it gives up and answers. */
export const FOREVER_TURNS = HARD_TOOL_ROUNDS * 2;

export const AGENT_PROBE_TEXT = `Look up the key "conformance" with the ${LOOKUP_TOOL} tool and tell me its value.`;

type ScriptStep = { content?: string; tool_calls?: Array<{ id?: string; name: string; arguments: Record<string, unknown> }>; times?: number };

/** The fake model's replies, in order, for one agent probe. */
export function agentProbeSteps(probe: AgentProbeName): ScriptStep[] {
  switch (probe) {
    case 'agent_tool_result':
      return [{ tool_calls: [{ id: LOOKUP_CALL_ID, name: LOOKUP_TOOL, arguments: { key: 'conformance' } }] }, { content: 'The lookup answered.' }];
    case 'agent_iteration_cap':
      return [{ tool_calls: [{ name: LOOKUP_TOOL, arguments: { key: 'again' } }], times: FOREVER_TURNS }, { content: 'I give up asking for tools.' }];
    case 'agent_refused_tool':
      return [
        {
          tool_calls: [
            { id: UNGRANTED_CALL_ID, name: UNGRANTED_TOOL, arguments: {} },
            { id: UNKNOWN_CALL_ID, name: UNKNOWN_TOOL, arguments: {} },
          ],
        },
        { content: 'Neither tool could be used.' },
      ];
  }
}
