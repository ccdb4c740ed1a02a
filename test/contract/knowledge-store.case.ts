// Contract suite for the knowledge store (docs/knowledge.md): bases, documents replaced whole, full-text and
// vector ranking with metadata filters. SQLite (through asAsyncKnowledge) and PostgreSQL both run it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KnowledgeFilter } from '../../src/core/protocol/knowledge.js';
import type { AsyncKnowledgeStore, KbDocumentInput } from '../../src/core/stores/knowledge-types.js';
import { expectLbotError, type OpenStore } from './harness.js';

const doc = (source: string, metadata: KbDocumentInput['metadata'] = {}): KbDocumentInput => ({
  source,
  origin: `/docs/${source}`,
  content_hash: `sha256:${source}`,
  metadata,
  bytes: 100,
});
const chunk = (text: string, embedding: number[] | null = null) => ({ text, tokens: text.split(' ').length, embedding });
const base = (id: string, embedding_model: string | null = null) => ({ id, name: id, embedding_model, chunk_tokens: 400, chunk_overlap: 50 });

export function knowledgeStoreContract(name: string, open: OpenStore<{ knowledge: AsyncKnowledgeStore }>): void {
  describe(`KnowledgeStore contract (${name})`, () => {
    let s: Awaited<ReturnType<typeof open>>;
    let kb: AsyncKnowledgeStore;
    beforeEach(async () => {
      s = await open();
      kb = s.knowledge;
    });
    afterEach(async () => {
      await s.close();
    });

    it('creates a base once (kb.exists the second time), lists it with counts, removes it with its documents', async () => {
      expect(await kb.createBase(base('docs'))).toMatchObject({ id: 'docs', version: 0, embedding_dims: null, chunk_tokens: 400 });
      await expectLbotError(() => kb.createBase(base('docs')), 'kb.exists');
      await kb.putDocument('docs', doc('a.md'), [chunk('one'), chunk('two')], 1);
      await kb.putDocument('docs', doc('b.md'), [chunk('three')], 1);
      expect(await kb.listBases()).toMatchObject([{ id: 'docs', documents: 2, chunks: 3 }]);
      await kb.setVersion('docs', 1);
      expect(await kb.getBase('docs')).toMatchObject({ version: 1 });
      expect(await kb.removeBase('docs')).toBe(true);
      expect(await kb.removeBase('docs')).toBe(false);
      expect(await kb.getBase('docs')).toBeNull();
      expect(await kb.listBases()).toEqual([]);
    });

    it('replaces a document with its chunks whole, and removes documents by source', async () => {
      await kb.createBase(base('docs'));
      await kb.putDocument('docs', doc('a.md', { lang: 'en' }), [chunk('old lighthouse'), chunk('old keeper')], 1);
      await kb.putDocument('docs', doc('a.md', { lang: 'de' }), [chunk('new lighthouse')], 2);
      expect(await kb.documents('docs')).toMatchObject([{ source: 'a.md', origin: '/docs/a.md', metadata: { lang: 'de' }, version: 2, chunk_count: 1 }]);
      expect(await kb.searchText('docs', ['old'], [], 10)).toEqual([]);
      const hits = await kb.searchText('docs', ['lighthouse'], [], 10);
      expect([...(await kb.chunks(hits.map((h) => h.row))).values()]).toMatchObject([
        { source: 'a.md', ordinal: 0, text: 'new lighthouse', metadata: { lang: 'de' } },
      ]);
      expect(await kb.removeDocuments('docs', ['a.md', 'missing.md'])).toBe(1);
      expect(await kb.documents('docs')).toEqual([]);
      expect(await kb.removeDocuments('docs', [])).toBe(0);
    });

    it('ranks full-text matches of any word, best first, within the base only', async () => {
      await kb.createBase(base('docs'));
      await kb.createBase(base('other'));
      await kb.putDocument('docs', doc('a.md'), [chunk('the keeper of the lamp keeps the lamp lit'), chunk('a lamp'), chunk('nothing here')], 1);
      await kb.putDocument('other', doc('b.md'), [chunk('lamp lamp lamp keeper')], 1);
      const hits = await kb.searchText('docs', ['keeper', 'lamp'], [], 10);
      const texts = [...(await kb.chunks(hits.map((h) => h.row))).values()];
      expect(hits).toHaveLength(2);
      expect(hits.map((h) => texts.find((t) => t.row === h.row)?.text)).toEqual(['the keeper of the lamp keeps the lamp lit', 'a lamp']);
      expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
      expect(await kb.searchText('docs', ['keeper', 'lamp'], [], 1)).toHaveLength(1);
      expect(await kb.searchText('docs', ['lighthouse'], [], 10)).toEqual([]);
      // Quotes and operators in a word are data, never query syntax.
      expect(await kb.searchText('docs', ["o'neil", 'lamp"', '|'], [], 10)).toEqual(expect.any(Array));
    });

    it('filters on document metadata with every operator', async () => {
      await kb.createBase(base('docs'));
      await kb.putDocument(
        'docs',
        doc('a.md', { type: 'guide', year: 2024, tags: ['ops', 'db'], path: 'ops/deploy', draft: false }),
        [chunk('deploy guide')],
        1,
      );
      await kb.putDocument('docs', doc('b.md', { type: 'note', year: 2021, tags: ['web'], path: 'web/cache' }), [chunk('deploy note')], 1);
      await kb.putDocument('docs', doc('c.md', { type: 'guide', year: 2019, path: 'ops/old', owner: null }), [chunk('deploy legacy')], 1);
      const sources = async (filters: KnowledgeFilter[]) => {
        const hits = await kb.searchText('docs', ['deploy'], filters, 10);
        return [...(await kb.chunks(hits.map((h) => h.row))).values()].map((c) => c.source).sort();
      };
      expect(await sources([{ field: 'type', operator: 'eq', value: 'guide' }])).toEqual(['a.md', 'c.md']);
      expect(await sources([{ field: 'type', operator: 'neq', value: 'guide' }])).toEqual(['b.md']);
      expect(await sources([{ field: 'year', operator: 'in', value: [2021, 2019] }])).toEqual(['b.md', 'c.md']);
      expect(await sources([{ field: 'year', operator: 'nin', value: [2021] }])).toEqual(['a.md', 'c.md']);
      expect(await sources([{ field: 'path', operator: 'prefix', value: 'ops/' }])).toEqual(['a.md', 'c.md']);
      expect(await sources([{ field: 'tags', operator: 'contains', value: 'ops' }])).toEqual(['a.md']);
      expect(await sources([{ field: 'path', operator: 'contains', value: 'cache' }])).toEqual(['b.md']);
      expect(await sources([{ field: 'year', operator: 'gte', value: 2021 }])).toEqual(['a.md', 'b.md']);
      expect(await sources([{ field: 'year', operator: 'lt', value: 2021 }])).toEqual(['c.md']);
      expect(await sources([{ field: 'tags', operator: 'exists', value: true }])).toEqual(['a.md', 'b.md']);
      expect(await sources([{ field: 'tags', operator: 'exists', value: false }])).toEqual(['c.md']);
      expect(await sources([{ field: 'owner', operator: 'eq', value: null }])).toEqual(['a.md', 'b.md', 'c.md']);
      // Values are bound data: text that looks like SQL or JSON-path syntax matches nothing.
      expect(await sources([{ field: 'type', operator: 'eq', value: "guide' OR '1'='1" }])).toEqual([]);
      expect(await sources([{ field: 'path', operator: 'prefix', value: "%' OR 1=1 --" }])).toEqual([]);
      expect(await sources([{ field: 'tags', operator: 'contains', value: '"ops"]' }])).toEqual([]);
      expect(
        await sources([
          { field: 'type', operator: 'eq', value: 'guide' },
          { field: 'year', operator: 'gt', value: 2020 },
        ]),
      ).toEqual(['a.md']);
    });

    it('ranks vectors by cosine, filters them, and refuses vectors of another length than the base holds', async () => {
      await kb.createBase(base('vec', 'embed'));
      await kb.putDocument('vec', doc('n.md', { side: 'north' }), [chunk('north', [0, 1, 0]), chunk('east', [1, 0, 0])], 1);
      await kb.putDocument('vec', doc('s.md', { side: 'south' }), [chunk('south', [0, -1, 0])], 1);
      expect(await kb.getBase('vec')).toMatchObject({ embedding_dims: 3 });
      const near = await kb.searchVector('vec', [0.1, 0.9, 0], [], 3);
      const texts = await kb.chunks(near.map((n) => n.row));
      expect(near.map((n) => texts.get(n.row)?.text)).toEqual(['north', 'east', 'south']);
      expect(near[0]!.score).toBeCloseTo(0.9 / Math.hypot(0.1, 0.9), 5);
      const south = await kb.searchVector('vec', [0.1, 0.9, 0], [{ field: 'side', operator: 'eq', value: 'south' }], 3);
      expect(south).toHaveLength(1);
      await expectLbotError(() => kb.putDocument('vec', doc('x.md'), [chunk('four', [1, 2, 3, 4])], 1), 'kb.embedding_failed');
      await expectLbotError(() => kb.putDocument('vec', doc('y.md'), [chunk('a', [1, 0, 0]), chunk('b', [1, 0])], 1), 'kb.embedding_failed');
      expect((await kb.documents('vec')).map((d) => d.source)).toEqual(['n.md', 's.md']);
      await kb.removeDocuments('vec', ['n.md', 's.md']);
      await kb.resetDims('vec');
      expect(await kb.getBase('vec')).toMatchObject({ embedding_dims: null });
      await kb.putDocument('vec', doc('z.md'), [chunk('four', [1, 2, 3, 4])], 2);
      expect(await kb.getBase('vec')).toMatchObject({ embedding_dims: 4 });
    });
  });
}
