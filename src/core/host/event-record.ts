// Event-log rows built from an envelope: the incoming event and the runner-originated records.
import type { EventEnvelope } from '../protocol/event.js';
import type { EventLogAppend, StateContextColumns } from '../stores/types.js';

/** The context columns every event-log row of a run shares. */
export function eventColumns(
  e: EventEnvelope,
): Pick<EventLogAppend, 'bot_id' | 'workspace_id' | 'conversation_id' | 'thread_id' | 'actor_type' | 'actor_id' | 'actor_name'> {
  return {
    bot_id: e.bot_id,
    workspace_id: e.workspace_id,
    conversation_id: e.conversation_id,
    thread_id: e.thread_id,
    actor_type: e.actor?.actor_type ?? null,
    actor_id: e.actor?.actor_id ?? null,
    actor_name: e.actor?.actor_name ?? null,
  };
}

/** The event-log row of the incoming event for one run (step 7 of the call chain). */
export function incomingEventRow(e: EventEnvelope, run_id: string | null, runner_id: string | null): EventLogAppend {
  return {
    ...eventColumns(e),
    event_id: e.event_id,
    event_type: e.event_type,
    event_time: e.event_time,
    source: e.source,
    subject_type: e.subject?.subject_type ?? null,
    subject_id: e.subject?.subject_id ?? null,
    input_text: e.input.text,
    input_json: { text: e.input.text, contents: e.input.contents, attachments: e.input.attachments },
    raw_ref: e.raw_ref?.artifact_id ?? e.raw_ref?.storage_key ?? null,
    run_id,
    runner_id,
    metadata: e.source_event_type ? { source_event_type: e.source_event_type } : {},
  };
}

/** The context columns of state rows the run writes (runner-protocol.md §8.4). */
export function stateColumns(e: EventEnvelope, runner_id: string, binding_identity: string): StateContextColumns {
  const { actor_name: _name, ...columns } = eventColumns(e);
  return { runner_id, binding_identity, ...columns, subject_type: e.subject?.subject_type ?? null, subject_id: e.subject?.subject_id ?? null };
}
