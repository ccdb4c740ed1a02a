// Registers the current event's attachments as artifacts (runner-protocol.md §8.3 "Input attachments").
// URLs are references only: the host never fetches them, whatever the scheme (AC-222).
import type { ArtifactRef, EventEnvelope } from '../protocol/event.js';
import type { AsyncArtifactStore } from '../stores/async.js';
import type { ArtifactRegister } from '../stores/types.js';

const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DATA_URL = /^data:([\w.+-]+\/[\w.+-]+)?(?:;[\w-]+=[^;,]*)*;base64,(.*)$/s;

/** Decodes canonical base64 (padding required, no stray characters); null when it is not. */
export function decodeBase64Strict(b64: string): Buffer | null {
  return STRICT_BASE64.test(b64) ? Buffer.from(b64, 'base64') : null;
}

/** Decodes raw base64 or a base64 data URL strictly; null when it is neither. */
export function decodeInlineContent(content: string): { bytes: Buffer; mime: string | null } | null {
  const m = DATA_URL.exec(content);
  const bytes = decodeBase64Strict((m ? (m[2] ?? '') : content).replace(/\s+/g, ''));
  return bytes ? { bytes, mime: m?.[1] ?? null } : null;
}

function registration(a: ArtifactRef, e: EventEnvelope, run: { run_id: string; runner_id: string }): ArtifactRegister | string {
  const base = {
    artifact_id: a.artifact_id,
    artifact_type: a.artifact_type ?? 'file',
    name: a.name ?? null,
    sha256: null,
    source: 'platform',
    conversation_id: e.conversation_id,
    run_id: run.run_id,
    runner_id: run.runner_id,
    bot_id: e.bot_id,
    workspace_id: e.workspace_id,
    expires_at: null,
  };
  const metadata: Record<string, unknown> = { input_attachment: true, input_source: a.source ?? 'platform' };
  if (a.content) {
    const decoded = decodeInlineContent(a.content);
    if (!decoded) return `attachment ${a.artifact_id}: content is not valid base64 or a base64 data URL; skipped`;
    return { ...base, mime_type: a.mime_type ?? decoded.mime, size_bytes: decoded.bytes.length, metadata, content: decoded.bytes };
  }
  if (a.url) {
    return {
      ...base,
      mime_type: a.mime_type ?? null,
      size_bytes: a.size ?? null,
      metadata: { ...metadata, url: a.url },
      storage_type: 'url',
      storage_key: a.url,
    };
  }
  if (a.id) {
    return {
      ...base,
      mime_type: a.mime_type ?? null,
      size_bytes: a.size ?? null,
      metadata: { ...metadata, platform_ref_id: a.id },
      storage_type: 'platform_ref',
      storage_key: a.id,
    };
  }
  return { ...base, mime_type: a.mime_type ?? null, size_bytes: a.size ?? null, metadata, storage_type: 'metadata_only', storage_key: null };
}

/** Registers each attachment; a bad one is skipped with a warning and never fails the run. */
export async function registerAttachments(
  store: AsyncArtifactStore,
  e: EventEnvelope,
  run: { run_id: string; runner_id: string },
  warn: (m: string) => void,
): Promise<void> {
  for (const a of e.input.attachments) {
    if (await store.get(a.artifact_id)) continue; // the same event replayed: its attachments are already registered
    const reg = registration(a, e, run);
    if (typeof reg === 'string') {
      warn(reg);
      continue;
    }
    try {
      await store.register(reg);
    } catch (err) {
      warn(`attachment ${a.artifact_id}: ${err instanceof Error ? err.message : String(err)}; skipped`);
    }
  }
}
