// The graphile-worker queue of a run: one named queue per (binding, conversation), so a conversation's runs
// execute one at a time in the order they were accepted while other conversations run in parallel.
import { createHash } from 'node:crypto';
import type { Binding } from '../../core/protocol/binding.js';
import type { EventEnvelope } from '../../core/protocol/event.js';
import { laneOf, type LaneId } from '../server/conversation-lanes.js';

/** The queue name of a lane: a digest, since conversation ids are platform data of any length. */
export function queueNameOf(lane: LaneId): string {
  return `lbot:${createHash('sha256').update(lane.key).digest('hex').slice(0, 40)}`;
}

/** The lane and queue name of a run; both null when it runs beside the others (parallel, no conversation). */
export function laneAndQueue(
  binding: Pick<Binding, 'binding_id' | 'run_policy'>,
  event: Pick<EventEnvelope, 'conversation_id'>,
): { lane: LaneId | null; queue: string | null } {
  const lane = laneOf(binding, event);
  return { lane, queue: lane ? queueNameOf(lane) : null };
}
