// The LangBot SDK's plugin → host actions onto lbot's proxy table: each forwarded action names the
// lbot method (so the router authorizes and audits it like any runner call) and how its payload and
// answer are renamed. Actions answered by the connection itself, and everything else, are listed too.
import { isRecord } from '../../json.js';
import type { ProxyMethod } from '../proxy.js';

type Data = Record<string, unknown>;

export type ForwardedAction = {
  method: ProxyMethod;
  /** SDK payload → lbot params (without run_id, which the connection copies). */
  params: (data: Data) => Data;
  /** lbot result → the SDK's answer. */
  result: (result: unknown) => Data;
};

const asData = (value: unknown): Data => (isRecord(value) ? value : {});
const pick = (data: Data, keys: readonly string[]): Data => {
  const out: Data = {};
  for (const k of keys) if (data[k] !== undefined) out[k] = data[k];
  return out;
};
const same = (keys: readonly string[]) => (data: Data) => pick(data, keys);
const take = (keys: readonly string[]) => (result: unknown) => pick(asData(result), keys);

/** `invoke_llm` / `invoke_llm_stream` / `count_tokens`: `llm_model_uuid → model_id`, `funcs → tools`; the SDK's `timeout` is the host's business. */
export function modelCallParams(data: Data): Data {
  const out: Data = { model_id: data.llm_model_uuid, messages: data.messages ?? [] };
  if (Array.isArray(data.funcs)) out.tools = data.funcs;
  if (data.extra_args !== undefined) out.extra_args = data.extra_args;
  if (typeof data.remove_think === 'boolean') out.remove_think = data.remove_think;
  return out;
}

/** lbot transcript items name their attachments `artifact_refs`; the SDK's `attachment_refs`. */
function transcriptItems(result: unknown, keys: readonly string[]): Data {
  const r = asData(result);
  const items = Array.isArray(r.items)
    ? r.items.map((item) => {
        const { artifact_refs, ...rest } = asData(item);
        return { ...rest, attachment_refs: artifact_refs ?? [] };
      })
    : [];
  return { ...pick(r, keys), items };
}

function storageActions(area: 'plugin' | 'workspace'): Record<string, ForwardedAction> {
  const withArea = (keys: readonly string[]) => (data: Data) => ({ ...pick(data, keys), area });
  return {
    [`set_${area}_storage`]: { method: 'storage.set', params: withArea(['key', 'value_base64']), result: () => ({}) },
    [`get_${area}_storage`]: { method: 'storage.get', params: withArea(['key']), result: take(['value_base64']) },
    [`delete_${area}_storage`]: { method: 'storage.delete', params: withArea(['key']), result: () => ({}) },
    [`get_${area}_storage_keys`]: { method: 'storage.list', params: withArea(['prefix']), result: take(['keys']) },
  };
}

/** Every SDK action lbot forwards to its proxy table. `invoke_llm_stream` also streams (see the connection). */
export const FORWARDED_ACTIONS: Readonly<Record<string, ForwardedAction>> = {
  count_tokens: { method: 'models.count_tokens', params: (d) => pick(modelCallParams(d), ['model_id', 'messages', 'tools']), result: take(['tokens']) },
  invoke_llm: { method: 'models.invoke', params: modelCallParams, result: take(['message', 'usage']) },
  invoke_llm_stream: { method: 'models.stream', params: modelCallParams, result: take(['message', 'usage']) },
  invoke_rerank: {
    method: 'models.rerank',
    params: (d) => ({ model_id: d.rerank_model_uuid, ...pick(d, ['query', 'documents', 'top_k']) }),
    result: take(['results']),
  },
  get_tool_detail: { method: 'tools.get_detail', params: same(['tool_name']), result: take(['tool']) },
  call_tool: { method: 'tools.call', params: same(['tool_name', 'parameters']), result: take(['result']) },
  retrieve_knowledge_base: { method: 'knowledge.retrieve', params: same(['kb_id', 'query_text', 'top_k', 'filters']), result: take(['results']) },
  history_page: {
    method: 'history.page',
    params: (d) => {
      const out = pick(d, ['conversation_id', 'before_cursor', 'after_cursor', 'limit', 'direction']);
      if (d.include_attachments !== undefined) out.include_artifacts = d.include_attachments;
      return out;
    },
    result: (r) => transcriptItems(r, ['next_cursor', 'prev_cursor', 'has_more', 'total_count']),
  },
  history_search: {
    method: 'history.search',
    params: same(['query', 'filters', 'top_k']),
    result: (r) => transcriptItems(r, ['total_count', 'query']),
  },
  event_get: { method: 'events.get', params: same(['event_id']), result: asData },
  event_page: { method: 'events.page', params: same(['conversation_id', 'event_types', 'before_cursor', 'limit']), result: asData },
  state_get: { method: 'state.get', params: same(['scope', 'key']), result: take(['value']) },
  state_set: { method: 'state.set', params: same(['scope', 'key', 'value']), result: take(['success']) },
  state_delete: { method: 'state.delete', params: same(['scope', 'key']), result: take(['success']) },
  state_list: { method: 'state.list', params: same(['scope', 'prefix', 'limit']), result: take(['keys', 'has_more']) },
  ...storageActions('plugin'),
  ...storageActions('workspace'),
};

/** Actions the connection answers itself (lbot has no proxy method for them). */
export const LOCAL_ACTIONS = ['run_get', 'steering_pull', 'get_prompt', 'get_langbot_version'] as const;
export type LocalAction = (typeof LOCAL_ACTIONS)[number];

export function isLocalAction(action: string): action is LocalAction {
  return (LOCAL_ACTIONS as readonly string[]).includes(action);
}

export function forwardedAction(action: string): ForwardedAction | null {
  return Object.hasOwn(FORWARDED_ACTIONS, action) ? (FORWARDED_ACTIONS[action] ?? null) : null;
}
