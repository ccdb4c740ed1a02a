// Answers of the LangBot wire that need no connection state: the refusal an action gets back and
// `invoke_llm_stream` as the deltas the SDK expects (docs/langbot-plugins.md).
import { isRecord } from '../../core/json.js';
import type { JsonObject } from '../../core/protocol/index.js';
import { modelCallParams } from '../../core/protocol/langbot/actions.js';
import type { ProxyCall } from '../../core/host/ports.js';

/** An answer the connection sends back for a plugin's action. */
export class ActionRefusal extends Error {
  constructor(
    readonly wire: { code: string; message: string; retryable: boolean; details: Record<string, unknown> },
    readonly exceptionName = 'AgentAPIError',
  ) {
    super(wire.message);
  }
}

export function unsupported(action: string): ActionRefusal {
  return new ActionRefusal({
    code: 'unsupported',
    message: `lbot does not implement the LangBot action ${JSON.stringify(action)}`,
    retryable: false,
    details: { action },
  });
}

/**
 * lbot's `models.stream` chunks carry the text so far; the SDK wants deltas, then a final `is_final`
 * chunk with the tool calls, an optional usage item, then `end` (sent by the caller).
 */
export async function streamModelCall(
  call: (params: Record<string, unknown>, notify: ProxyCall['notify']) => Promise<unknown>,
  data: Record<string, unknown>,
  push: (item: JsonObject) => void,
): Promise<unknown> {
  let sent = '';
  let n = 0;
  const reply = await call({ ...modelCallParams(data), run_id: data.run_id }, (_method, params) => {
    const chunk = isRecord(params.chunk) ? params.chunk : {};
    const text = typeof chunk.content === 'string' ? chunk.content : '';
    if (!text.startsWith(sent) || text.length === sent.length) return;
    push({ chunk: { role: 'assistant', content: text.slice(sent.length), is_final: false, msg_sequence: n++ } });
    sent = text;
  });
  const r = isRecord(reply) ? reply : {};
  const message = isRecord(r.message) ? r.message : {};
  const full = typeof message.content === 'string' ? message.content : '';
  const rest = full.startsWith(sent) ? full.slice(sent.length) : '';
  push({ chunk: { role: 'assistant', content: rest, tool_calls: message.tool_calls ?? null, is_final: true, msg_sequence: n++ } });
  if (isRecord(r.usage)) push({ usage: r.usage });
  return {};
}
