// storage.*: binary key/value areas owned by the caller plugin or the workspace (§7.9).
import type { ProxyParams, ProxyResult } from '../../protocol/proxy.js';
import { ApiError } from '../api-error.js';
import type { RunSession } from '../session.js';
import type { HandlerCall } from './types.js';

/** Owner columns of an area; the plugin can never choose them. */
function owner(session: RunSession, area: 'plugin' | 'workspace' | 'binding'): { type: string; id: string } {
  if (area === 'plugin') return { type: 'plugin', id: session.plugin_identity };
  if (area === 'workspace') return { type: 'workspace', id: 'default' };
  throw new ApiError('unauthorized', 'the binding storage area is reserved and not available in protocol v1', 'resource_not_authorized');
}

export async function storageGet({ session, params, env }: HandlerCall<ProxyParams<'storage.get'>>): Promise<ProxyResult<'storage.get'>> {
  const o = owner(session, params.area);
  const value = await env.stores.storage.get(o.type, o.id, params.key);
  if (!value) throw new ApiError('not_found', `storage key ${params.key} not found`, 'key_not_found', { key: params.key });
  return { value_base64: value.toString('base64') };
}

export async function storageSet({ session, params, env }: HandlerCall<ProxyParams<'storage.set'>>): Promise<ProxyResult<'storage.set'>> {
  const o = owner(session, params.area);
  const bytes = Buffer.from(params.value_base64, 'base64');
  const limit = env.limits.storageValueBytes;
  if (limit >= 0 && bytes.length > limit) {
    throw new ApiError('payload_too_large', `storage value for ${params.key} is ${bytes.length} bytes; the limit is ${limit}`, 'storage_value_too_large', {
      size_bytes: bytes.length,
      limit_bytes: limit,
    });
  }
  await env.stores.storage.set(o.type, o.id, params.key, bytes);
  return { success: true };
}

export async function storageDelete({ session, params, env }: HandlerCall<ProxyParams<'storage.delete'>>): Promise<ProxyResult<'storage.delete'>> {
  const o = owner(session, params.area);
  return { success: await env.stores.storage.delete(o.type, o.id, params.key) };
}

export async function storageList({ session, params, env }: HandlerCall<ProxyParams<'storage.list'>>): Promise<ProxyResult<'storage.list'>> {
  const o = owner(session, params.area);
  return { keys: await env.stores.storage.list(o.type, o.id, params.prefix ?? null) };
}
