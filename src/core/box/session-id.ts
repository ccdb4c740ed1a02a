// Session ids: the sanitiser for raw ids and the `{variable}` template renderer (box.md §2.3, §5.8).
import { createHash } from 'node:crypto';
import { validationError } from './errors.js';

export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$/;
export const DEFAULT_SESSION_TEMPLATE = '{launcher_type}_{launcher_id}';

/**
 * Maps any raw id onto the session-id alphabet deterministically: disallowed characters become `-`,
 * and when anything changed, `-` plus 8 hex of sha256(raw) keeps distinct raw ids distinct.
 */
export function sanitizeSessionId(raw: string): string {
  if (SESSION_ID_PATTERN.test(raw)) return raw;
  const digest = createHash('sha256').update(raw).digest('hex').slice(0, 8);
  let body = raw.replace(/[^A-Za-z0-9_.:@-]/g, '-').replace(/^[^A-Za-z0-9]+/, '');
  body = body.slice(0, 127 - 9);
  return body ? `${body}-${digest}` : `s-${digest}`;
}

/** Throws box.validation unless `id` is a usable session id as given (CLI input is not rewritten). */
export function assertSessionId(id: string): string {
  if (!SESSION_ID_PATTERN.test(id)) {
    throw validationError(`session id ${JSON.stringify(id)} is not valid: use 1-128 characters of A-Z a-z 0-9 _ . : @ - starting with a letter or digit`, {
      session_id: id,
    });
  }
  return id;
}

export type SessionVariables = {
  query_id?: string | number | null;
  launcher_type?: string | null;
  launcher_id?: string | null;
  sender_id?: string | null;
  conversation_id?: string | null;
  [key: string]: string | number | null | undefined;
};

/** Fills the derived variables the way the reference does (box.md §5.8). */
function resolveVariables(vars: SessionVariables): Record<string, string> {
  const text = (v: string | number | null | undefined): string | undefined => (v === null || v === undefined || v === '' ? undefined : String(v));
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(vars)) {
    const t = text(v);
    if (t !== undefined) out[k] = t;
  }
  const queryId = text(vars.query_id);
  out.query_id = queryId ?? 'unknown';
  out.launcher_type = text(vars.launcher_type) ?? 'query';
  out.launcher_id = text(vars.launcher_id) ?? queryId ?? 'unknown';
  out.sender_id = text(vars.sender_id) ?? text(vars.launcher_id) ?? queryId ?? 'unknown';
  out.global = 'global';
  return out;
}

/** Renders a template like `{launcher_type}_{launcher_id}` (plain `{identifier}` only) and sanitises it. */
export function renderSessionId(template: string, vars: SessionVariables): string {
  const values = resolveVariables(vars);
  const rendered = template.replace(/\{([a-z_]+)\}/g, (_m, name: string) => (Object.hasOwn(values, name) ? (values[name] ?? 'unknown') : 'unknown'));
  return sanitizeSessionId(rendered.trim() === '' ? 'unknown' : rendered);
}
