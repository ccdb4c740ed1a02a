// Filters adapter parameters before they reach `ctx.adapter.extra.params` (AC-210, runner-protocol.md §12 item 12).

const SENSITIVE = /(secret|token|key|password|credential|api_key|apikey)/i;

function isJsonValue(value: unknown, depth = 0): boolean {
  if (depth > 32) return false;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((v) => isJsonValue(v, depth + 1));
  if (typeof value === 'object') return Object.values(value).every((v) => isJsonValue(v, depth + 1));
  return false;
}

/** Drops `_`-prefixed keys, secret-looking names and non-JSON values. */
export function filterAdapterParams(params: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params)) {
    if (key.startsWith('_') || SENSITIVE.test(key) || !isJsonValue(value)) continue;
    out[key] = value;
  }
  return out;
}
