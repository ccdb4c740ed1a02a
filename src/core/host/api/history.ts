// history.page / history.search: transcript reads limited to the run's conversation (§6.4, §7.5).
import type { ProxyParams, ProxyResult } from '../../protocol/proxy.js';
import { ApiError } from '../api-error.js';
import type { RunSession } from '../session.js';
import type { HandlerCall } from './types.js';

/** The conversation a read may touch, or null for an empty page (§6.4). */
export function scopedConversation(session: RunSession, requested: string | null | undefined, api: string): string | null {
  if (requested === undefined || requested === null) return session.conversation_id;
  if (session.conversation_id === null) {
    throw new ApiError('unauthorized', `${api} is not available without a run conversation`, 'out_of_scope');
  }
  if (requested !== session.conversation_id) {
    throw new ApiError('unauthorized', `conversation ${requested} is not accessible by this run`, 'out_of_scope', { conversation_id: requested });
  }
  return requested;
}

const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, n));

export async function historyPage({ session, params, env }: HandlerCall<ProxyParams<'history.page'>>): Promise<ProxyResult<'history.page'>> {
  const conversation = scopedConversation(session, params.conversation_id, 'history.page');
  if (conversation === null) return { items: [], next_cursor: null, prev_cursor: null, has_more: false };
  const page = await env.stores.transcript.page({
    conversation_id: conversation,
    before_seq: params.before_cursor ? Number(params.before_cursor) : null,
    after_seq: params.after_cursor ? Number(params.after_cursor) : null,
    limit: clamp(params.limit, 1, 100),
    direction: params.direction,
    include_artifacts: params.include_artifacts,
  });
  return {
    items: page.items,
    next_cursor: page.has_more && page.next_seq !== null ? String(page.next_seq) : null,
    prev_cursor: page.prev_seq !== null ? String(page.prev_seq) : null,
    has_more: page.has_more,
  };
}

export async function historySearch({ session, params, env }: HandlerCall<ProxyParams<'history.search'>>): Promise<ProxyResult<'history.search'>> {
  const { conversation_id, roles, item_types } = params.filters;
  const conversation = scopedConversation(session, conversation_id, 'history.search');
  if (conversation === null) return { items: [], total_count: 0, query: params.query };
  const items = await env.stores.transcript.search({
    conversation_id: conversation,
    query: params.query,
    ...(roles ? { roles } : {}),
    ...(item_types ? { item_types } : {}),
    top_k: clamp(params.top_k, 1, 100),
  });
  return { items, total_count: items.length, query: params.query };
}
