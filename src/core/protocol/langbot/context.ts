// lbot's run context as the LangBot SDK's AgentRunContext validates it: the source literal, integer
// timestamps, attachment and raw_ref field names, and the context APIs lbot answers for the SDK.
import { isRecord } from '../../json.js';
import type { RunContext } from '../context.js';

/** `trigger.source` is a closed Literal in the SDK; lbot's `pipeline_adapter` is its `host_adapter`. */
const SDK_SOURCES = new Set(['platform', 'webui', 'api', 'scheduler', 'system', 'host_adapter']);
/** The keys an SDK `InputAttachment` allows (`extra="forbid"`). */
const ATTACHMENT_KEYS = ['type', 'mime_type', 'size', 'name', 'source', 'url', 'path', 'content', 'id'] as const;

function sdkSource(source: string): string {
  if (source === 'pipeline_adapter') return 'host_adapter';
  return SDK_SOURCES.has(source) ? source : 'system';
}

function intOrNull(value: number | null): number | null {
  return value === null ? null : Math.floor(value);
}

function attachment(ref: Record<string, unknown>): Record<string, unknown> {
  const mapped: Record<string, unknown> = { ...ref, id: ref.id ?? ref.artifact_id, type: ref.type ?? ref.artifact_type ?? 'file' };
  const out: Record<string, unknown> = {};
  for (const key of ATTACHMENT_KEYS) if (mapped[key] !== undefined && mapped[key] !== null) out[key] = mapped[key];
  return out;
}

/** The `context` of `run_agent`; lbot's extra keys stay (the SDK ignores them where it allows extras). */
export function toLangbotContext(ctx: RunContext): Record<string, unknown> {
  const { trigger, event, input, context } = ctx;
  const raw = event.raw_ref;
  return {
    ...ctx,
    trigger: { ...trigger, source: sdkSource(trigger.source), timestamp: Math.floor(trigger.timestamp) },
    event: {
      ...event,
      source: sdkSource(event.source),
      event_time: intOrNull(event.event_time),
      raw_ref: raw ? { ref_id: raw.artifact_id, storage_key: raw.storage_key } : null,
    },
    input: { ...input, attachments: input.attachments.map((a) => attachment(isRecord(a) ? a : {})) },
    context: {
      ...context,
      // run_get is how a LangBot runner learns of a cancel; steering and the prompt are not lbot's.
      available_apis: { ...context.available_apis, run_get: true, steering_pull: false, prompt_get: false },
    },
  };
}
