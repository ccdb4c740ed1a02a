// Secret masking for everything `lbot mcp` prints: env and header values, secret-looking arguments and
// URL parameters, and any configured secret that shows up in free text such as stderr (AC-160).
import { MASK, maskSecrets } from '../../core/config.js';
import { isRecord } from '../../core/json.js';
import type { McpServerRecord } from './config.js';

const SECRET_WORD = /(secret|token|key|password|passwd|credential|auth|bearer|cookie|session)/i;
/** Shorter values are too likely to occur by accident in unrelated text. */
const MIN_REDACT_LENGTH = 4;

function maskArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  let maskNext = false;
  for (const arg of args) {
    if (maskNext) {
      out.push(MASK);
      maskNext = false;
      continue;
    }
    const eq = arg.indexOf('=');
    if (arg.startsWith('-') && eq > 0 && SECRET_WORD.test(arg.slice(0, eq))) out.push(`${arg.slice(0, eq + 1)}${MASK}`);
    else {
      out.push(arg);
      maskNext = arg.startsWith('-') && eq < 0 && SECRET_WORD.test(arg);
    }
  }
  return out;
}

function maskUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw;
  }
  if (url.username || url.password) {
    url.username = url.username ? MASK : '';
    url.password = url.password ? MASK : '';
  }
  for (const key of [...url.searchParams.keys()]) if (SECRET_WORD.test(key)) url.searchParams.set(key, MASK);
  return url.toString();
}

const maskValues = (values: Record<string, string>) => Object.fromEntries(Object.keys(values).map((k) => [k, MASK]));

/** The record as printed: env/header values masked (keys kept), secret arguments and URL parts masked. */
export function maskServerRecord(record: McpServerRecord): Record<string, unknown> {
  const masked: Record<string, unknown> = {
    ...record,
    env: maskValues(record.env),
    headers: maskValues(record.headers),
    box: { ...record.box, env: maskValues(record.box.env) },
  };
  if (record.command) masked.command = maskArgs(record.command);
  if (record.url) masked.url = maskUrl(record.url);
  const deep = maskSecrets(masked);
  return isRecord(deep) ? deep : masked;
}

/** Every configured value that must never be printed. */
export function secretValues(record: McpServerRecord): string[] {
  const values = [...Object.values(record.env), ...Object.values(record.headers), ...Object.values(record.box.env)];
  if (record.oauth.client_secret) values.push(record.oauth.client_secret);
  for (const header of Object.values(record.headers)) {
    // "Bearer abc" leaks "abc" on its own too.
    const parts = header.split(/\s+/).filter((p) => p.length >= MIN_REDACT_LENGTH);
    values.push(...parts);
  }
  return [...new Set(values.filter((v) => v.length >= MIN_REDACT_LENGTH))].sort((a, b) => b.length - a.length);
}

/** Replaces each secret value inside free text (stderr tails, error messages) with the mask. */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(MASK);
  return out;
}
