// Metadata filters as SQL over `kb_documents.metadata` (jsonb) with numbered parameters: every value and JSON
// path is bound, never spliced. The same meaning as the SQLite filters (core/stores/sqlite/knowledge-filters.ts).
import type { KnowledgeFilter } from '../../../core/protocol/knowledge.js';
import { COMPARISON_SQL } from '../../../core/stores/sqlite/knowledge-filters.js';

/** `AND …` predicates over the document alias `d`; parameters are numbered from `first`. */
export function pgFilterSql(filters: readonly KnowledgeFilter[], first: number): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const p = (value: unknown) => {
    params.push(value);
    return `$${first + params.length - 1}`;
  };
  const parts: string[] = [];
  for (const f of filters) {
    const path = p(f.field.split('.'));
    const at = `(d.metadata #> ${path}::text[])`;
    const str = `(d.metadata #>> ${path}::text[])`;
    const values = Array.isArray(f.value) ? f.value : [f.value];
    const one = values[0] ?? null;
    const json = (v: unknown) => `${p(JSON.stringify(v ?? null))}::jsonb`;
    switch (f.operator) {
      case 'eq':
        parts.push(one === null ? `coalesce(${at}, 'null'::jsonb) = 'null'::jsonb` : `${at} = ${json(one)}`);
        break;
      case 'neq':
        parts.push(`${at} IS DISTINCT FROM ${json(one)}`);
        break;
      case 'in':
      case 'nin': {
        const list = `${p(values.map((v) => JSON.stringify(v ?? null)))}::jsonb[]`;
        parts.push(f.operator === 'in' ? `${at} = ANY(${list})` : `(${at} IS NULL OR NOT (${at} = ANY(${list})))`);
        break;
      }
      case 'prefix':
        parts.push(`starts_with(${str}, ${p(String(one))})`);
        break;
      case 'contains':
        // A list field (tags) contains the value as an element; a text field contains it as a substring.
        parts.push(`(CASE jsonb_typeof(${at}) WHEN 'array' THEN ${at} @> jsonb_build_array(${json(one)}) ELSE strpos(${str}, ${p(String(one))}) > 0 END)`);
        break;
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte': {
        const op = COMPARISON_SQL[f.operator];
        parts.push(`${at} ${op} ${json(one)}`);
        break;
      }
      case 'exists':
        parts.push(f.value === false ? `${at} IS NULL` : `${at} IS NOT NULL`);
        break;
    }
  }
  return { sql: parts.map((s) => ` AND ${s}`).join(''), params };
}
