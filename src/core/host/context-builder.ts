// Builds the event-first run context (runner-protocol.md §4.3, §4.6); history is referenced, never inlined.
import type { Binding } from '../protocol/binding.js';
import type { AvailableApis, ContextAccess, Resources, RunContext, RunState } from '../protocol/context.js';
import type { Delivery, EventEnvelope } from '../protocol/event.js';
import type { RunnerDescriptor } from '../protocol/manifest.js';

/** `ctx.delivery`: the envelope's surface narrowed by the binding's delivery policy (§3.3). */
export function applyDeliveryPolicy(delivery: Delivery, binding: Pick<Binding, 'delivery_policy'>): Delivery {
  const policy = binding.delivery_policy;
  const sizes = [delivery.max_message_size, policy.max_message_size].filter((n): n is number => typeof n === 'number');
  return {
    ...delivery,
    supports_streaming: delivery.supports_streaming && policy.enable_streaming,
    max_message_size: sizes.length ? Math.min(...sizes) : null,
  };
}

export function availableApis(
  descriptor: Pick<RunnerDescriptor, 'permissions'>,
  binding: Pick<Binding, 'state_policy'>,
  resources: Resources,
  conversationId: string | null,
): AvailableApis {
  const p = descriptor.permissions;
  const conv = conversationId !== null;
  return {
    history_page: p.history.includes('page') && conv,
    history_search: p.history.includes('search') && conv,
    event_get: p.events.includes('get'),
    event_page: p.events.includes('page') && conv,
    artifact_metadata: p.artifacts.includes('metadata'),
    artifact_read: p.artifacts.includes('read'),
    state: binding.state_policy.enable_state && binding.state_policy.state_scopes.length > 0,
    storage: resources.storage.plugin_storage || resources.storage.workspace_storage,
    prompt_get: false,
  };
}

export type ContextInputs = {
  run_id: string;
  event: EventEnvelope;
  binding: Binding;
  descriptor: RunnerDescriptor;
  config: Record<string, unknown>;
  resources: Resources;
  state: RunState;
  latestSeq: number | null;
  deadline_at: number | null;
  nowMs: number;
  hostVersion: string;
  adapterParams: Record<string, unknown> | null;
};

export function buildRunContext(i: ContextInputs): RunContext {
  const e = i.event;
  const delivery = applyDeliveryPolicy(e.delivery, i.binding);
  const latest_cursor = e.conversation_id && i.latestSeq !== null ? String(i.latestSeq) : null;
  const context: ContextAccess = {
    conversation_id: e.conversation_id,
    thread_id: e.thread_id,
    latest_cursor,
    event_seq: null,
    transcript_seq: latest_cursor === null ? null : Number(latest_cursor),
    has_history_before: latest_cursor !== null,
    inline_policy: { mode: 'current_event', delivered_count: 0, source_total_count: null, messages_complete: false, reason: 'self_managed_context' },
    available_apis: availableApis(i.descriptor, i.binding, i.resources, e.conversation_id),
  };
  return {
    run_id: i.run_id,
    trigger: { type: e.event_type, source: e.source, timestamp: e.event_time ?? Math.floor(i.nowMs / 1000) },
    event: {
      event_id: e.event_id,
      event_type: e.event_type,
      event_time: e.event_time,
      source: e.source,
      source_event_type: e.source_event_type,
      raw_ref: e.raw_ref,
      data: e.data,
    },
    conversation: e.conversation_id
      ? {
          conversation_id: e.conversation_id,
          thread_id: e.thread_id,
          launcher_type: null,
          launcher_id: null,
          sender_id: e.actor?.actor_id ?? null,
          bot_id: e.bot_id,
          workspace_id: e.workspace_id,
          session_id: null,
          pipeline_uuid: i.binding.pipeline_uuid,
        }
      : null,
    actor: e.actor,
    subject: e.subject,
    input: e.input,
    delivery,
    resources: i.resources,
    context,
    state: i.state,
    runtime: {
      langbot_version: i.hostVersion,
      sdk_protocol_version: i.descriptor.protocol_version,
      query_id: null,
      trace_id: i.run_id,
      deadline_at: i.deadline_at,
      metadata: {
        bot_id: e.bot_id,
        workspace_id: e.workspace_id,
        streaming_supported: delivery.supports_streaming,
        model_context_window_tokens: null,
      },
      host: 'lbot',
    },
    config: i.config,
    bootstrap: null,
    adapter: { query_id: null, pipeline_uuid: i.binding.pipeline_uuid, extra: i.adapterParams ? { params: i.adapterParams } : {} },
    metadata: {},
  };
}
