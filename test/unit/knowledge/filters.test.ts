// The accepted forms of `filters` and each operator, in memory (config bases) and as SQL (the store).
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { matchesFilters } from '../../../src/core/knowledge/filter-match.js';
import { normalizeFilters, type KnowledgeFilter } from '../../../src/core/protocol/knowledge.js';
import { filterSql } from '../../../src/core/stores/sqlite/knowledge-filters.js';

const docs: Array<Record<string, unknown>> = [
  { path: 'guide/install.md', type: 'markdown', pages: 3, tags: ['setup', 'linux'], draft: false, meta: { lang: 'en' } },
  { path: 'guide/use.md', type: 'markdown', pages: 10, tags: ['usage'], draft: true, meta: { lang: 'de' } },
  { path: 'spec.pdf', type: 'pdf', pages: 40 },
];

/** Indexes of the documents a filter set keeps, by SQL over json_extract. */
function sqlMatches(filters: KnowledgeFilter[]): number[] {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE d (i INTEGER, metadata_json TEXT)');
  docs.forEach((m, i) => db.prepare('INSERT INTO d VALUES (?, ?)').run(i, JSON.stringify(m)));
  const f = filterSql(filters);
  const rows = db.prepare(`SELECT i FROM d WHERE 1${f.sql} ORDER BY i`).all(...f.params) as Array<{ i: number }>;
  db.close();
  return rows.map((r) => r.i);
}

const memMatches = (filters: KnowledgeFilter[]) => docs.flatMap((m, i) => (matchesFilters(m, filters) ? [i] : []));

describe('knowledge filters', () => {
  const cases: Array<[string, unknown, number[]]> = [
    ['none', {}, [0, 1, 2]],
    ['map form: equality', { type: 'pdf' }, [2]],
    ['map form: list is in', { type: ['pdf', 'html'] }, [2]],
    ['one condition', { field: 'type', operator: 'eq', value: 'markdown' }, [0, 1]],
    ['list form', [{ field: 'type', operator: 'neq', value: 'markdown' }], [2]],
    [
      'conditions form, all must hold',
      {
        conditions: [
          { field: 'type', value: 'markdown' },
          { field: 'pages', operator: 'gt', value: 5 },
        ],
      },
      [1],
    ],
    ['prefix', [{ field: 'path', operator: 'prefix', value: 'guide/' }], [0, 1]],
    ['contains an element of a list', [{ field: 'tags', operator: 'contains', value: 'linux' }], [0]],
    ['contains a substring', [{ field: 'path', operator: 'contains', value: 'use' }], [1]],
    ['nin keeps missing fields', [{ field: 'meta.lang', operator: 'nin', value: ['de'] }], [0, 2]],
    ['nested eq', [{ field: 'meta.lang', operator: 'eq', value: 'en' }], [0]],
    ['boolean', [{ field: 'draft', operator: 'eq', value: true }], [1]],
    ['lte', [{ field: 'pages', operator: 'lte', value: 10 }], [0, 1]],
    ['exists', [{ field: 'tags', operator: 'exists' }], [0, 1]],
    ['exists false', [{ field: 'tags', operator: 'exists', value: false }], [2]],
  ];
  for (const [name, raw, expected] of cases) {
    it(`${name}: SQL and memory agree`, () => {
      const filters = normalizeFilters(raw);
      expect(sqlMatches(filters)).toEqual(expected);
      expect(memMatches(filters)).toEqual(expected);
    });
  }

  it('refuses a field that could escape the JSON path, a list for eq, an unknown operator, and too many conditions', () => {
    expect(() => normalizeFilters([{ field: `a"); DROP TABLE d; --`, value: 1 }])).toThrow(/metadata field/);
    expect(() => normalizeFilters([{ field: 'a', operator: 'eq', value: [1] }])).toThrow(/one value/);
    expect(() => normalizeFilters([{ field: 'a', operator: 'like', value: 'x' }])).toThrow();
    expect(() => normalizeFilters(Array.from({ length: 33 }, () => ({ field: 'a', value: 1 })))).toThrow();
  });
});
