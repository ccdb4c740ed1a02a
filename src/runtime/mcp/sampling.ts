// `sampling/createMessage` from an MCP server (docs/mcp.md "Client capabilities"): served only when the
// operator granted the server a configured model (`mcp.servers[].sampling.model`), through the host's
// model provider, text only and bounded; otherwise refused with an error that says how to grant one.
import { ErrorCode, McpError, type CreateMessageRequest, type CreateMessageResult } from '@modelcontextprotocol/sdk/types.js';
import type { ModelConfig } from '../../core/config.js';
import { ApiError } from '../../core/host/api-error.js';
import type { ModelProvider } from '../../core/host/ports.js';
import type { Message } from '../../core/protocol/context.js';
import type { McpServerRecord } from './config.js';

/** At most this many messages, and this much text (UTF-8) in all, per sampling request. */
export const SAMPLING_MAX_MESSAGES = 100;
export const SAMPLING_MAX_TEXT_BYTES = 1024 * 1024;

/** Answers one sampling request of one server. */
export type Sampler = (params: CreateMessageRequest['params'], signal: AbortSignal) => Promise<CreateMessageResult>;

export type SamplingDeps = {
  /** The configured models as they are now (a running serve follows config edits). */
  models(): readonly ModelConfig[];
  /** The host's model provider (loaded on the first sampling request). */
  provider(): Promise<ModelProvider>;
};

/** The refusal a server gets when it asks for sampling and no model is granted to it. */
export function samplingRefused(server: string): McpError {
  return new McpError(
    ErrorCode.InvalidRequest,
    `lbot grants no model to MCP server ${server} for sampling: set mcp.servers[].sampling.model to a configured model id (lbot mcp add ${server} --sampling-model ID)`,
  );
}

function textOf(server: string, content: CreateMessageRequest['params']['messages'][number]['content']): string {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks
    .map((b) => {
      if (b.type !== 'text') throw new McpError(ErrorCode.InvalidParams, `MCP server ${server}: lbot samples text content only, not ${b.type}`);
      return b.text;
    })
    .join('\n');
}

/** The sampler of a server whose record grants a model; null when it grants none. */
export function createSampler(record: McpServerRecord, deps: SamplingDeps): Sampler | null {
  const granted = record.sampling.model;
  if (!granted) return null;
  return async (params, signal) => {
    const model = deps.models().find((m) => m.id === granted && m.model_type === 'llm');
    if (!model)
      throw new McpError(ErrorCode.InvalidRequest, `MCP server ${record.name} is granted model ${granted} for sampling, but no such llm model is configured`);
    if (params.tools || params.toolChoice) throw new McpError(ErrorCode.InvalidParams, `MCP server ${record.name}: lbot's sampling offers no tools`);
    if (params.messages.length === 0 || params.messages.length > SAMPLING_MAX_MESSAGES)
      throw new McpError(ErrorCode.InvalidParams, `MCP server ${record.name}: a sampling request needs 1 to ${SAMPLING_MAX_MESSAGES} messages`);
    const messages: Message[] = [];
    if (params.systemPrompt) messages.push({ role: 'system', content: params.systemPrompt });
    for (const m of params.messages) messages.push({ role: m.role, content: textOf(record.name, m.content) });
    const bytes = messages.reduce((n, m) => n + Buffer.byteLength(typeof m.content === 'string' ? m.content : ''), 0);
    if (bytes > SAMPLING_MAX_TEXT_BYTES)
      throw new McpError(ErrorCode.InvalidParams, `MCP server ${record.name}: sampling text of ${bytes} bytes is over the ${SAMPLING_MAX_TEXT_BYTES}-byte cap`);
    // The server's maxTokens is a request; the grant's max_tokens and the model's cap bound it.
    const max_tokens = Math.min(params.maxTokens, record.sampling.max_tokens, model.max_tokens_cap);
    const extra_args = { max_tokens, ...(params.temperature !== undefined ? { temperature: params.temperature } : {}) };
    try {
      const reply = await (await deps.provider()).invoke({ model_id: model.id, messages, tools: [], extra_args, deadline_at: null, signal });
      const content = reply.message.content;
      const text = typeof content === 'string' ? content : (content ?? []).map((c) => (c.type === 'text' && typeof c.text === 'string' ? c.text : '')).join('');
      return {
        role: 'assistant',
        content: { type: 'text', text },
        model: reply.model ?? model.model ?? model.id,
        stopReason: reply.finish_reason === 'length' ? 'maxTokens' : 'endTurn',
      };
    } catch (err) {
      if (err instanceof McpError) throw err;
      const why = err instanceof ApiError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
      throw new McpError(ErrorCode.InternalError, `sampling with model ${model.id} failed: ${why}`);
    }
  };
}
