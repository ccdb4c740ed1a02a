// Models, tools, knowledge bases, files and platform actions: calls into host capabilities (§7.2–§7.4, §7.10–§7.11).
import type { ModelReply, ProxyParams, ProxyResult } from '../../protocol/proxy.js';
import { ApiError, toApiError } from '../api-error.js';
import type { ModelCall } from '../ports.js';
import type { HandlerCall } from './types.js';
import { z } from 'zod';
import { LbotError } from '../../errors.js';
import { normalizeFilters } from '../../protocol/knowledge.js';
import { firstIssue } from '../../zod-issue.js';
import { isResourceAllowed } from '../session.js';

/** The provider's view of a chat call: the whole message list, the run deadline and signal travel with it. */
function modelCall(
  session: HandlerCall<unknown>['session'],
  params: ProxyParams<'models.invoke'>,
  messages: ModelCall['messages'],
  signal: AbortSignal,
): ModelCall {
  const { model_id, tools, extra_args, remove_think } = params;
  return { model_id, messages, tools, extra_args, remove_think, deadline_at: session.deadline_at, signal };
}

/** Runs a chat call over the whole message list of its context, answering the context it makes when one is kept. */
async function withContext(
  { session, params, env }: HandlerCall<ProxyParams<'models.invoke'>>,
  call: (messages: ModelCall['messages']) => Promise<ModelReply>,
): Promise<ModelReply> {
  const { messages, keep } = env.contexts.resolve(session.run_id, params);
  const reply = await call(messages);
  return keep ? { ...reply, context_id: keep() } : reply;
}

export async function modelsInvoke(c: HandlerCall<ProxyParams<'models.invoke'>>): Promise<ProxyResult<'models.invoke'>> {
  return await withContext(c, (messages) => c.env.models.invoke(modelCall(c.session, c.params, messages, c.signal)));
}

export async function modelsStream(c: HandlerCall<ProxyParams<'models.stream'>>): Promise<ProxyResult<'models.stream'>> {
  const { session, params, env, signal, notify } = c;
  const stream_id = params.stream_id ?? `${session.run_id}:${params.model_id}`;
  return await withContext(c, (messages) =>
    env.models.stream(modelCall(session, params, messages, signal), (chunk) => notify('models.stream/chunk', { run_id: session.run_id, stream_id, chunk })),
  );
}

export async function modelsRerank({ session, params, env, signal }: HandlerCall<ProxyParams<'models.rerank'>>): Promise<ProxyResult<'models.rerank'>> {
  const documents = params.documents.slice(0, 64);
  const results = await env.models.rerank({
    model_id: params.model_id,
    query: params.query,
    documents,
    top_n: params.top_k ?? null,
    deadline_at: session.deadline_at,
    signal,
  });
  const sorted = results.filter((r) => r.index >= 0 && r.index < documents.length).sort((a, b) => b.relevance_score - a.relevance_score);
  return { results: params.top_k ? sorted.slice(0, params.top_k) : sorted };
}

export async function modelsCountTokens({ params, env }: HandlerCall<ProxyParams<'models.count_tokens'>>): Promise<ProxyResult<'models.count_tokens'>> {
  return await env.models.countTokens({ model_id: params.model_id, messages: params.messages, text: params.text, tools: params.tools });
}

export async function modelsEmbed({ session, params, env, signal }: HandlerCall<ProxyParams<'models.embed'>>): Promise<ProxyResult<'models.embed'>> {
  return await env.models.embed({ model_id: params.model_id, input: params.input, deadline_at: session.deadline_at, signal });
}

export async function toolsGetDetail({ session, params, env }: HandlerCall<ProxyParams<'tools.get_detail'>>): Promise<ProxyResult<'tools.get_detail'>> {
  const tools = env.toolsFor(session.run_id);
  const tool = (await tools?.list())?.find((t) => t.name === params.tool_name);
  if (!tool) throw new ApiError('not_found', `tool ${params.tool_name} not found`, 'tool_not_found', { tool_name: params.tool_name });
  return {
    tool: {
      name: params.tool_name,
      label: {},
      description: tool.description,
      human_desc: tool.description,
      parameters: tool.parameters,
      spec: { tool_type: tool.tool_type },
    },
  };
}

export async function toolsCall({ session, params, env, signal }: HandlerCall<ProxyParams<'tools.call'>>): Promise<ProxyResult<'tools.call'>> {
  const tools = env.toolsFor(session.run_id);
  if (!tools) throw new ApiError('not_found', `tool ${params.tool_name} not found`, 'tool_not_found', { tool_name: params.tool_name });
  try {
    const result = await tools.call(params.tool_name, params.parameters, { run_id: session.run_id, signal });
    return { result, tool_response: result };
  } catch (err) {
    throw toApiError(err);
  }
}

/** Only the bases this run was granted (its resources), with their current sizes. */
export async function knowledgeList({ session, env }: HandlerCall<ProxyParams<'knowledge.list'>>): Promise<ProxyResult<'knowledge.list'>> {
  return { knowledge_bases: (await env.knowledge.list()).filter((k) => isResourceAllowed(session, 'knowledge_base', k.kb_id)) };
}

export async function knowledgeRetrieve({
  session,
  params,
  env,
  signal,
}: HandlerCall<ProxyParams<'knowledge.retrieve'>>): Promise<ProxyResult<'knowledge.retrieve'>> {
  let filters;
  try {
    filters = normalizeFilters(params.filters);
  } catch (err) {
    const issue = err instanceof z.ZodError ? firstIssue(err, 'filters', ['filters']) : null;
    throw new ApiError('invalid_argument', `knowledge.retrieve: ${issue?.text ?? 'filters: invalid'}`, 'bad_argument', { path: issue?.path ?? ['filters'] });
  }
  const rerank = params.rerank_model_id ?? null;
  if (rerank !== null && !isResourceAllowed(session, 'model', rerank))
    throw new ApiError('unauthorized', `model ${rerank} is not authorized for this agent run`, 'resource_not_authorized', { model: rerank });
  try {
    const results = await env.knowledge.retrieve(params.kb_id, {
      query: params.query_text,
      top_k: params.top_k,
      filters,
      rerank_model_id: rerank,
      deadline_at: session.deadline_at,
      signal,
    });
    return { results };
  } catch (err) {
    if (err instanceof LbotError && err.code === 'kb.not_found')
      throw new ApiError('not_found', `knowledge base ${params.kb_id} not found`, 'knowledge_base_not_found', { kb_id: params.kb_id });
    throw toApiError(err);
  }
}

export function filesGet(): never {
  throw new ApiError('unauthorized', 'no files are granted to runners in protocol v1', 'resource_not_authorized');
}

export function platformRequestAction(): never {
  throw new ApiError(
    'unauthorized',
    'platform actions are disabled: emit an action.requested result instead (recorded, never executed)',
    'platform_actions_disabled',
  );
}
