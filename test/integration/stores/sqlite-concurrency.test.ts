// AC-183 at the store level: two processes write one fresh data dir at the same time; both succeed, nothing is lost.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventRecord, TranscriptItem } from '../../../src/core/protocol/proxy.js';
import type { Page, TranscriptPage } from '../../../src/core/stores/types.js';
import { openSqliteStores } from '../../../src/core/stores/sqlite/open.js';
import { finished, killAll, spawnChild } from './child-process.js';
import { tempDir } from './temp-data-dir.js';

let dir = '';
afterEach(() => {
  killAll();
  rmSync(dir, { recursive: true, force: true });
});

const COUNT = 250;

describe('two writer processes on one data dir', () => {
  it('both finish and every row of both is stored, in order, searchable', async () => {
    dir = tempDir();
    const children = ['c1', 'c2'].map((c) => spawnChild('appender.ts', [dir, c, String(COUNT)]));
    const done = Promise.all(children.map(finished));
    await Promise.all(children.map((child) => new Promise((resolve) => child.stdout?.once('data', resolve))));
    writeFileSync(path.join(dir, 'go'), '');
    const results = await done;
    for (const r of results) {
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('ready\ndone\n');
    }
    const stores = openSqliteStores(dir);
    try {
      const seqs = new Map<string, number[]>();
      for (const c of ['c1', 'c2']) {
        const events: EventRecord[] = [];
        let before: number | null = null;
        for (;;) {
          const page: Page<EventRecord> = stores.events.page({ conversation_id: c, limit: 100, before_seq: before });
          events.push(...page.items);
          if (!page.has_more) break;
          before = page.next_seq;
        }
        expect(new Set(events.map((e) => e.event_id)).size).toBe(COUNT);
        const items: TranscriptItem[] = [];
        let after: number | null = 0;
        for (;;) {
          const page: TranscriptPage = stores.transcript.page({
            conversation_id: c,
            after_seq: after,
            limit: 100,
            direction: 'forward',
            include_artifacts: false,
          });
          items.push(...page.items);
          if (!page.has_more) break;
          after = page.next_seq;
        }
        seqs.set(
          c,
          items.map((i) => i.seq ?? 0),
        );
        expect(items.map((i) => i.content)).toEqual(Array.from({ length: COUNT }, (_, i) => `${c} says number ${i} token${c}x${i}`));
        expect(stores.transcript.search({ conversation_id: c, query: `TOKEN${c}X${COUNT - 1}`, top_k: 5 })).toHaveLength(1);
        const run = stores.runs.get(`run-${c}`);
        expect(run?.status).toBe('completed');
        expect(run?.api_calls).toHaveLength(COUNT);
        expect(stores.state.list(`runner:${c}`, null, 100).has_more).toBe(true);
        expect(Object.keys(stores.state.snapshot(`runner:${c}`))).toHaveLength(COUNT);
      }
      // The writes really interleaved: each writer appended some rows before the other's last one.
      const [a, b] = [seqs.get('c1') ?? [], seqs.get('c2') ?? []];
      expect(Math.min(...a)).toBeLessThan(Math.max(...b));
      expect(Math.min(...b)).toBeLessThan(Math.max(...a));
    } finally {
      stores.close();
    }
  });
});
