// events.get / events.page: event-log reads; anything outside the run's scope looks missing (§6.5, §7.6).
import type { ProxyParams, ProxyResult } from '../../protocol/proxy.js';
import { ApiError } from '../api-error.js';
import { scopedConversation } from './history.js';
import type { HandlerCall } from './types.js';

const notFound = (id: string) => new ApiError('not_found', `event ${id} not found`, 'event_not_found', { event_id: id });

export async function eventsGet({ session, params, env }: HandlerCall<ProxyParams<'events.get'>>): Promise<ProxyResult<'events.get'>> {
  const records = await env.stores.events.findByEventId(params.event_id);
  const own = records.find((r) => r.run_id === session.run_id);
  const visible = own ?? records.find((r) => session.conversation_id !== null && r.conversation_id === session.conversation_id);
  if (!visible) throw notFound(params.event_id);
  return visible;
}

export async function eventsPage({ session, params, env }: HandlerCall<ProxyParams<'events.page'>>): Promise<ProxyResult<'events.page'>> {
  const conversation = scopedConversation(session, params.conversation_id, 'events.page');
  if (conversation === null) return { items: [], next_cursor: null, prev_cursor: null, has_more: false };
  const page = await env.stores.events.page({
    conversation_id: conversation,
    event_types: params.event_types ?? null,
    before_seq: params.before_cursor ? Number(params.before_cursor) : null,
    limit: Math.min(100, Math.max(1, params.limit)),
  });
  return { items: page.items, next_cursor: page.has_more && page.next_seq !== null ? String(page.next_seq) : null, prev_cursor: null, has_more: page.has_more };
}
