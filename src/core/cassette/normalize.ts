// Makes recorded values comparable across runs: drops per-run keys and masks generated ids.
import { isRecord } from '../json.js';

/** Keys whose values differ on every run of the same behaviour. */
const VOLATILE_KEYS = new Set(['run_id', 'at', 'timestamp', 'sequence', 'trace_id', 'stream_id']);
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;

/** A deep copy with volatile keys removed, generated UUIDs masked as `<id>`, and object keys sorted. */
export function stableValue(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(UUID, '<id>');
  if (Array.isArray(value)) return value.map(stableValue);
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      if (VOLATILE_KEYS.has(key)) continue;
      const v = value[key];
      if (v !== undefined) out[key] = stableValue(v);
    }
    return out;
  }
  return value;
}

/** Canonical JSON text of a stable value (the equality key of requests and results). */
export function stableJson(value: unknown): string {
  return JSON.stringify(stableValue(value)) ?? 'null';
}

/** Indented canonical JSON, the text the diffs are made of. */
export function stablePretty(value: unknown): string {
  return JSON.stringify(stableValue(value), null, 2) ?? 'null';
}
