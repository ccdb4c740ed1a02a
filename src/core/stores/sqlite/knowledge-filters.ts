// Metadata filters as SQL over `kb_documents.metadata_json`: every value and JSON path is a bound parameter.
import type { KnowledgeFilter } from '../../protocol/knowledge.js';

type SqlValue = string | number | null;

/** SQLite's json_extract yields 1/0 for JSON booleans: compare against the same. */
const sqlValue = (v: unknown): SqlValue => (typeof v === 'boolean' ? (v ? 1 : 0) : typeof v === 'string' || typeof v === 'number' ? v : null);

/** The JSON path of a field already validated as dot-separated `[A-Za-z0-9_-]+` segments. */
const jsonPath = (field: string) =>
  `$${field
    .split('.')
    .map((seg) => `."${seg}"`)
    .join('')}`;

/** The SQL operator of each comparison filter (the same on SQLite and PostgreSQL). */
export const COMPARISON_SQL = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

/** `AND …` predicates over the document alias `d`, with their parameters in order. */
export function filterSql(filters: readonly KnowledgeFilter[]): { sql: string; params: SqlValue[] } {
  const parts: string[] = [];
  const params: SqlValue[] = [];
  const M = 'd.metadata_json';
  for (const f of filters) {
    const path = jsonPath(f.field);
    const values = Array.isArray(f.value) ? f.value.map(sqlValue) : [sqlValue(f.value)];
    const v = values[0] ?? null;
    switch (f.operator) {
      case 'eq':
        if (v === null) {
          parts.push(`json_extract(${M}, ?) IS NULL`);
          params.push(path);
        } else {
          parts.push(`json_extract(${M}, ?) = ?`);
          params.push(path, v);
        }
        break;
      case 'neq':
        parts.push(`json_extract(${M}, ?) IS NOT ?`);
        params.push(path, v);
        break;
      case 'in':
      case 'nin': {
        const list = values.length ? values.map(() => '?').join(', ') : 'NULL';
        parts.push(f.operator === 'in' ? `json_extract(${M}, ?) IN (${list})` : `(json_extract(${M}, ?) IS NULL OR json_extract(${M}, ?) NOT IN (${list}))`);
        params.push(path, ...(f.operator === 'nin' ? [path] : []), ...values);
        break;
      }
      case 'prefix':
        parts.push(`instr(json_extract(${M}, ?), ?) = 1`);
        params.push(path, String(v));
        break;
      case 'contains':
        // A list field (tags) contains the value as an element; a text field contains it as a substring.
        parts.push(
          `(CASE json_type(${M}, ?) WHEN 'array' THEN EXISTS (SELECT 1 FROM json_each(${M}, ?) WHERE json_each.value = ?) ELSE instr(json_extract(${M}, ?), ?) > 0 END)`,
        );
        params.push(path, path, v, path, String(v));
        break;
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte': {
        const op = COMPARISON_SQL[f.operator];
        parts.push(`json_extract(${M}, ?) ${op} ?`);
        params.push(path, v);
        break;
      }
      case 'exists':
        parts.push(f.value === false ? `json_type(${M}, ?) IS NULL` : `json_type(${M}, ?) IS NOT NULL`);
        params.push(path);
        break;
    }
  }
  return { sql: parts.map((p) => ` AND ${p}`).join(''), params };
}
