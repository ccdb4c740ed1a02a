// The probe events of `lbot runner test`: a streamed and a plain message, two non-message events, and the
// message runs used to exercise cancel and the deadline (F-EV shapes, acceptance §0.7).
import { parseEnvelope } from '../../core/host/event-input.js';
import type { EventEnvelope } from '../../core/protocol/event.js';
import type { ProbeName } from '../../core/conformance/evidence.js';
import { AGENT_PROBE_TEXT, type AgentProbeName } from '../../core/conformance/agent-plan.js';

/** Seconds of the deadline the `deadline` probe sets through `runner_config.timeout`. */
export const DEADLINE_PROBE_S = 1;
/** Milliseconds after the run starts at which the `cancel` probe cancels (sooner on the first result). */
export const CANCEL_AFTER_MS = 100;

const actor = { actor_type: 'user', actor_id: 'u1', actor_name: 'Ann' };
const message = (id: string, streaming: boolean, text = 'ping') => ({
  event_id: id,
  event_type: 'message.received',
  source: 'api',
  conversation_id: 'conformance-c1',
  actor,
  subject: { subject_type: 'message', subject_id: `${id}-m` },
  input: { text, contents: [{ type: 'text', text }], attachments: [] },
  delivery: { surface: 'cli', supports_streaming: streaming },
});

const RAW: Record<ProbeName, Record<string, unknown>> = {
  message: message('conformance-msg', true),
  message_no_stream: message('conformance-msg-plain', false),
  join: {
    event_id: 'conformance-join',
    event_type: 'group.member_joined',
    source: 'platform',
    conversation_id: 'conformance-g1',
    actor: { actor_type: 'user', actor_id: 'u2', actor_name: 'Bob' },
    subject: { subject_type: 'group_member', subject_id: 'conformance-g1:u2' },
    input: { text: null, contents: [] },
    delivery: { surface: 'cli', supports_streaming: false },
  },
  friend: {
    event_id: 'conformance-friend',
    event_type: 'friend.request_received',
    source: 'platform',
    actor: { actor_type: 'user', actor_id: 'u3', actor_name: 'Cid' },
    subject: { subject_type: 'friend_request', subject_id: 'fr-1', data: { comment: 'hi, add me' } },
    input: { text: null, contents: [] },
    delivery: { surface: 'cli', supports_streaming: false },
  },
  cancel: message('conformance-cancel', true),
  deadline: message('conformance-deadline', true),
};

/** The envelope of one probe, parsed like any event the host receives. */
export function probeEvent(probe: ProbeName, maxDataBytes: number): EventEnvelope {
  return parseEnvelope(RAW[probe], `conformance probe ${probe}`, maxDataBytes);
}

/** The message event of one agent probe: a streaming surface and a request the fake model answers with tool calls. */
export function agentProbeEvent(probe: AgentProbeName, maxDataBytes: number): EventEnvelope {
  return parseEnvelope(
    { ...message(`conformance-${probe}`, true, AGENT_PROBE_TEXT), conversation_id: `conformance-${probe}` },
    `conformance probe ${probe}`,
    maxDataBytes,
  );
}
