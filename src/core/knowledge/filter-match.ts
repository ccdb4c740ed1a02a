// Metadata filters evaluated in memory, for the documents of config-listed bases (the store runs them as SQL).
import { isRecord } from '../json.js';
import type { KnowledgeFilter } from '../protocol/knowledge.js';

function at(metadata: Record<string, unknown>, field: string): unknown {
  let v: unknown = metadata;
  for (const seg of field.split('.')) {
    if (!isRecord(v) || !Object.hasOwn(v, seg)) return undefined;
    v = v[seg];
  }
  return v;
}

const cmp = (a: unknown, b: unknown): number | null =>
  typeof a === 'number' && typeof b === 'number' ? a - b : typeof a === 'string' && typeof b === 'string' ? (a < b ? -1 : a > b ? 1 : 0) : null;

function matches(metadata: Record<string, unknown>, f: KnowledgeFilter): boolean {
  const v = at(metadata, f.field);
  const values = Array.isArray(f.value) ? f.value : [f.value];
  switch (f.operator) {
    case 'eq':
      return f.value === null ? v === undefined || v === null : v === f.value;
    case 'neq':
      return v !== f.value;
    case 'in':
      return values.some((x) => x === v);
    case 'nin':
      return !values.some((x) => x === v);
    case 'prefix':
      return typeof v === 'string' && v.startsWith(String(f.value));
    case 'contains':
      return Array.isArray(v) ? v.includes(f.value) : typeof v === 'string' && v.includes(String(f.value));
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const c = cmp(v, f.value);
      if (c === null) return false;
      return f.operator === 'gt' ? c > 0 : f.operator === 'gte' ? c >= 0 : f.operator === 'lt' ? c < 0 : c <= 0;
    }
    case 'exists':
      return f.value === false ? v === undefined : v !== undefined;
  }
}

/** True when every filter holds for `metadata`. */
export function matchesFilters(metadata: Record<string, unknown>, filters: readonly KnowledgeFilter[]): boolean {
  return filters.every((f) => matches(metadata, f));
}
