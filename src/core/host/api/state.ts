// state.get / set / delete / list: governed by the binding's state policy and the run's scope keys (§6.6, §7.8).
import type { StateScope } from '../../protocol/binding.js';
import type { ProxyParams, ProxyResult } from '../../protocol/proxy.js';
import { ApiError } from '../api-error.js';
import { aliasStateKey } from '../state-scope.js';
import type { RunSession } from '../session.js';
import type { HandlerCall } from './types.js';

/** Max serialized size of one state value, in UTF-8 bytes (runner-protocol.md §5.5). */
export const STATE_VALUE_LIMIT_BYTES = 262_144;

/** Checks the state policy for a scope and returns the run's scope key (§6.6 steps 3–5). */
export function stateScopeKey(session: RunSession, scope: StateScope): string {
  if (!session.state_policy.enable_state) throw new ApiError('unauthorized', 'state access is disabled by binding policy', 'state_disabled');
  if (!session.state_policy.state_scopes.includes(scope)) {
    throw new ApiError('unauthorized', `scope ${scope} is not enabled by binding policy`, 'scope_disabled', { scope });
  }
  const key = session.scope_keys[scope];
  if (!key) {
    throw new ApiError('invalid_argument', `scope key not available for scope ${scope}: the event lacks a ${scope} id`, 'scope_key_unavailable', { scope });
  }
  return key;
}

/** Serializes a state value, enforcing JSON-ness and the UTF-8 byte cap. */
export function serializeStateValue(value: unknown, limitBytes: number, key: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    json = undefined;
  }
  if (json === undefined) throw new ApiError('invalid_argument', `state value for ${key} is not JSON-serializable`, 'not_json', { key });
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > limitBytes) {
    throw new ApiError('payload_too_large', `state value for ${key} is ${bytes} bytes; the limit is ${limitBytes} bytes`, 'state_value_too_large', {
      key,
      size_bytes: bytes,
      limit_bytes: limitBytes,
    });
  }
  return json;
}

export async function stateGet({ session, params, env }: HandlerCall<ProxyParams<'state.get'>>): Promise<ProxyResult<'state.get'>> {
  const got = await env.stores.state.get(stateScopeKey(session, params.scope), aliasStateKey(params.key));
  return { value: got.found ? got.value : null };
}

export async function stateSet({ session, params, env }: HandlerCall<ProxyParams<'state.set'>>): Promise<ProxyResult<'state.set'>> {
  const scopeKey = stateScopeKey(session, params.scope);
  const key = aliasStateKey(params.key);
  const json = serializeStateValue(params.value, env.limits.stateValueBytes, key);
  await env.stores.state.set(params.scope, scopeKey, key, json, session.state_columns);
  await env.stores.runs.addStateWrite(session.run_id, { scope: params.scope, key });
  return { success: true };
}

export async function stateDelete({ session, params, env }: HandlerCall<ProxyParams<'state.delete'>>): Promise<ProxyResult<'state.delete'>> {
  return { success: await env.stores.state.delete(stateScopeKey(session, params.scope), aliasStateKey(params.key)) };
}

export async function stateList({ session, params, env }: HandlerCall<ProxyParams<'state.list'>>): Promise<ProxyResult<'state.list'>> {
  const limit = typeof params.limit === 'number' && Number.isInteger(params.limit) && params.limit > 0 ? Math.min(params.limit, 100) : 100;
  const prefix = params.prefix ? aliasStateKey(params.prefix) : null;
  return await env.stores.state.list(stateScopeKey(session, params.scope), prefix, limit);
}
