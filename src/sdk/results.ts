// Builders for every `AgentRunResult` type (runner-protocol.md §5.1).
import type { RunnerResult } from './define.js';

type Json = Record<string, unknown>;

/** `message.completed` with an assistant text message. */
export function message(text: string, extra: Json = {}): RunnerResult {
  return { type: 'message.completed', data: { message: { role: 'assistant', content: text, ...extra } } };
}

/** `message.delta`; deltas are cumulative: pass the whole text so far (runner-protocol.md §5.4). */
export function delta(cumulativeText: string, extra: Json = {}): RunnerResult {
  return { type: 'message.delta', data: { chunk: { role: 'assistant', content: cumulativeText, ...extra } } };
}

/** `run.completed`, optionally with a final message and a finish reason. */
export function completed(opts: { message?: string | Json; finish_reason?: string } = {}): RunnerResult {
  const data: Json = { finish_reason: opts.finish_reason ?? 'stop' };
  if (typeof opts.message === 'string') data.message = { role: 'assistant', content: opts.message };
  else if (opts.message) data.message = opts.message;
  return { type: 'run.completed', data };
}

/** `run.failed` with a reason, a code (default `runner.error`) and whether a retry may help. */
export function failed(error: string, code = 'runner.error', retryable = false): RunnerResult {
  return { type: 'run.failed', data: { error, code, retryable } };
}

/** `state.updated`: the host stores the value under the run's scope key. */
export function stateUpdated(scope: 'conversation' | 'actor' | 'subject' | 'runner', key: string, value: unknown): RunnerResult {
  return { type: 'state.updated', data: { scope, key, value } };
}

/** `artifact.created`; pass `content` to have the host store bytes (at most 1 MiB inline). */
export function artifactCreated(artifact: {
  artifact_type: string;
  artifact_id?: string;
  mime_type?: string;
  name?: string;
  content?: Uint8Array | string;
  metadata?: Json;
}): RunnerResult {
  const { content, ...rest } = artifact;
  const data: Json = { ...rest };
  if (content !== undefined) {
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
    data.content_base64 = bytes.toString('base64');
    data.size_bytes = bytes.length;
  }
  return { type: 'artifact.created', data };
}

/** `tool.call.started`. */
export function toolStarted(tool_name: string, parameters: Json = {}, tool_call_id?: string): RunnerResult {
  return { type: 'tool.call.started', data: { tool_name, parameters, ...(tool_call_id ? { tool_call_id } : {}) } };
}

/** `tool.call.completed` with the tool's result or an error text. */
export function toolCompleted(tool_name: string, outcome: { result?: unknown; error?: string | null } = {}, tool_call_id?: string): RunnerResult {
  return {
    type: 'tool.call.completed',
    data: { tool_name, result: outcome.result ?? null, error: outcome.error ?? null, ...(tool_call_id ? { tool_call_id } : {}) },
  };
}

/** `action.requested`: asks the host to perform a platform action (reserved in v1). */
export function actionRequested(action: string, target: Json | null = null, payload: Json | null = null): RunnerResult {
  return { type: 'action.requested', data: { action, target, payload } };
}
