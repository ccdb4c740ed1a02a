// prepareRun reads the knowledge-base catalog only for a runner whose manifest asks for knowledge access:
// serve prepares a run per request, and most runners never touch a base.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src/core/config.js';
import type { KnowledgePort } from '../../../src/core/host/ports.js';
import { prepareRun } from '../../../src/core/host/run-setup.js';
import type { KnowledgeBaseInfo } from '../../../src/core/protocol/knowledge.js';
import { asAsyncStores, type AsyncStores } from '../../../src/core/stores/async.js';
import { openSqliteStores } from '../../../src/core/stores/sqlite/open.js';
import { systemClock } from '../../../src/runtime/clock.js';
import { binding, descriptor, envelope } from './fixtures.js';

const BASE: KnowledgeBaseInfo = {
  kb_id: 'kb-docs',
  kb_name: 'Docs',
  kb_type: 'local',
  origin: 'store',
  embedding_model: null,
  documents: 1,
  chunks: 3,
  version: 1,
};

describe('prepareRun knowledge catalog', () => {
  let dir: string;
  let close: () => void;
  let stores: AsyncStores;
  let listed: number;
  const knowledge: KnowledgePort = {
    list: () => {
      listed++;
      return Promise.resolve([BASE]);
    },
    retrieve: () => Promise.reject(new Error('not used')),
  };

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'lbot-run-setup-'));
    const sqlite = openSqliteStores(dir);
    close = () => sqlite.close();
    stores = asAsyncStores(sqlite);
    listed = 0;
  });
  afterEach(() => {
    close();
    rmSync(dir, { recursive: true, force: true });
  });

  const prepare = (permissions: Record<string, unknown>) => {
    const d = descriptor({ permissions });
    const deps = { stores, config: ConfigSchema.parse({}), knowledge, clock: systemClock, version: 'test' };
    const b = binding({ resource_policy: { allowed_kb_uuids: ['kb-docs', 'kb-missing'] } });
    return prepareRun(deps, { event: envelope(), binding: b }, { descriptor: d, identity: 'acme/scripted', config: {} });
  };

  it('does not list the bases for a runner without knowledge permission, and grants none', async () => {
    const run = await prepare({});
    expect(listed).toBe(0);
    expect(run.context.resources.knowledge_bases).toEqual([]);
    expect(run.warnings).toEqual([]);
  });

  it('lists them for a runner that may read bases, granting the existing ones and warning of the rest', async () => {
    const run = await prepare({ knowledge_bases: ['list', 'retrieve'] });
    expect(listed).toBe(1);
    expect(run.context.resources.knowledge_bases).toEqual([{ kb_id: 'kb-docs', kb_name: 'Docs', kb_type: 'local' }]);
    expect(run.warnings).toEqual(['knowledge base kb-missing does not exist; it is skipped']);
  });
});
