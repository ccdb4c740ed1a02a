// artifacts.metadata / artifacts.read_range with the access rule of §6.5; host-only fields never leave.
import type { ArtifactMetadata, ProxyParams, ProxyResult } from '../../protocol/proxy.js';
import type { ArtifactRecord } from '../../stores/types.js';
import { ApiError } from '../api-error.js';
import type { RunSession } from '../session.js';
import type { HandlerCall } from './types.js';

/** Strips the host-only fields of a record. */
export function publicArtifact(r: ArtifactRecord): ArtifactMetadata {
  return {
    artifact_id: r.artifact_id,
    artifact_type: r.artifact_type,
    mime_type: r.mime_type,
    name: r.name,
    size_bytes: r.size_bytes,
    sha256: r.sha256,
    source: r.source,
    conversation_id: r.conversation_id,
    run_id: r.run_id,
    runner_id: r.runner_id,
    created_at: r.created_at,
    expires_at: r.expires_at,
    metadata: r.metadata,
  };
}

/** The record if this run may see it; every refusal is the same not_found as a missing id. */
async function visibleArtifact(session: RunSession, id: string, call: HandlerCall<unknown>): Promise<ArtifactRecord> {
  const r = await call.env.stores.artifacts.get(id);
  const nowS = call.env.clock.now() / 1000;
  const inScope =
    r !== null &&
    (r.run_id === session.run_id || (r.conversation_id !== null && session.conversation_id !== null && r.conversation_id === session.conversation_id)) &&
    (r.expires_at === null || r.expires_at > nowS);
  if (!r || !inScope) throw new ApiError('not_found', `artifact ${id} not found`, 'artifact_not_found', { artifact_id: id });
  return r;
}

export async function artifactsMetadata(call: HandlerCall<ProxyParams<'artifacts.metadata'>>): Promise<ProxyResult<'artifacts.metadata'>> {
  return publicArtifact(await visibleArtifact(call.session, call.params.artifact_id, call));
}

export async function artifactsReadRange(call: HandlerCall<ProxyParams<'artifacts.read_range'>>): Promise<ProxyResult<'artifacts.read_range'>> {
  const record = await visibleArtifact(call.session, call.params.artifact_id, call);
  return await call.env.stores.artifacts.read(record, call.params.offset, call.params.length ?? null);
}
