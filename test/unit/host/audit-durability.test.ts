// A refused proxy call is answered only once its audit row and every earlier one are committed; an allowed
// call may be answered first, but the run's end waits for its row; a failed audit write is not dropped: a
// refusal becomes audit_failed and the run fails with the store error. "Committed" is read through a second
// connection, which sees only what is durable; the same holds under a commit window that holds writes back.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src/core/config.js';
import { LbotError } from '../../../src/core/errors.js';
import { ApiError } from '../../../src/core/host/api-error.js';
import { createHost } from '../../../src/core/host/host.js';
import { asAsyncStores } from '../../../src/core/stores/async.js';
import type { PluginConnection, PluginLauncher, ProxyCallHandler } from '../../../src/core/host/ports.js';
import type { ApiCallAudit } from '../../../src/core/stores/types.js';
import { openSqliteStores, type SqliteStores } from '../../../src/core/stores/sqlite/open.js';
import { systemClock } from '../../../src/runtime/clock.js';
import { createModelProvider } from '../../../src/runtime/models/providers.js';
import { binding, descriptor, envelope, scriptedConnection, scriptedCatalog } from './fixtures.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

type Seen = { outcome: 'answered' | 'refused'; reason: string | null; auditAtAnswer: ApiCallAudit[] };

const STATE_GET = { method: 'state.get', params: { scope: 'conversation', key: 'k' } };
const REFUSED = { method: 'history.page', params: {} };

/** A host whose one fake plugin makes `calls` in turn per run (one refused `history.page` by default) and then completes. */
function setup(
  calls: Array<{ method: string; params: Record<string, unknown> }> = [REFUSED],
  opts: { commitWindowMs?: number } = {},
): {
  stores: SqliteStores;
  seen: Seen[];
  warnings: string[];
  run: () => ReturnType<ReturnType<typeof createHost>['run']>;
  close: () => Promise<void>;
} {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lbot-audit-'));
  dirs.push(dataDir);
  const stores = openSqliteStores(dataDir, opts);
  // A second connection to the same file: it sees only committed rows.
  const committed = openSqliteStores(dataDir);
  const auditAtAnswer = (run_id: string) => committed.runs.get(run_id)?.api_calls ?? [];
  const seen: Seen[] = [];
  const warnings: string[] = [];
  const connection = (handler: ProxyCallHandler): PluginConnection =>
    scriptedConnection(async (params, onResult) => {
      for (const c of calls) {
        const call = {
          caller_plugin: 'acme/scripted',
          method: c.method,
          params: { ...c.params, run_id: params.run_id },
          signal: new AbortController().signal,
          notify: () => undefined,
        };
        try {
          await handler(call);
          seen.push({ outcome: 'answered', reason: null, auditAtAnswer: auditAtAnswer(params.run_id) });
        } catch (err) {
          seen.push({
            outcome: 'refused',
            reason: err instanceof ApiError ? err.reason : String(err),
            auditAtAnswer: auditAtAnswer(params.run_id),
          });
        }
      }
      onResult({ type: 'message.completed', data: { message: { role: 'assistant', content: 'done' } } });
      onResult({ type: 'run.completed', data: {} });
      return { status: 'completed' };
    });
  const launcher: PluginLauncher = { start: async (_spec, handler) => connection(handler) };
  const d = descriptor();
  const catalog = scriptedCatalog(d);
  const host = createHost({
    stores: asAsyncStores(stores),
    launcher,
    catalog: async () => catalog,
    config: ConfigSchema.parse({}),
    models: createModelProvider([]),
    clock: systemClock,
    version: 'test',
    warn: (m) => warnings.push(m),
  });
  return {
    stores,
    seen,
    warnings,
    run: () => host.run({ event: envelope(), binding: binding() }),
    close: async () => {
      await host.close();
      stores.close();
      committed.close();
    },
  };
}

describe('audit of proxy calls', () => {
  it('a refused call is answered only after its audit row is committed', async () => {
    const h = setup();
    try {
      const outcome = await h.run();
      expect(outcome.status).toBe('completed');
      expect(h.seen).toEqual([
        {
          outcome: 'refused',
          reason: 'permission_denied',
          auditAtAnswer: [expect.objectContaining({ action: 'history.page', decision: 'denied', code: 'unauthorized' })],
        },
      ]);
    } finally {
      await h.close();
    }
  });

  it('a refusal after allowed calls is answered only once its row and every earlier one are committed', async () => {
    const h = setup([STATE_GET, STATE_GET, REFUSED]);
    try {
      const outcome = await h.run();
      expect(outcome.status).toBe('completed');
      const refusal = h.seen.at(-1);
      expect(refusal?.outcome).toBe('refused');
      expect(refusal?.auditAtAnswer.map((c) => [c.action, c.decision])).toEqual([
        ['state.get', 'allowed'],
        ['state.get', 'allowed'],
        ['history.page', 'denied'],
      ]);
    } finally {
      await h.close();
    }
  });

  it('under a commit window, a refusal is still answered only once it and every earlier row are committed', async () => {
    // A window far longer than the test: only an explicit commit makes rows visible to the second connection.
    const h = setup([STATE_GET, REFUSED], { commitWindowMs: 60_000 });
    try {
      const outcome = await h.run();
      expect(outcome.status).toBe('completed');
      expect(h.seen[0]?.auditAtAnswer).toEqual([]);
      expect(h.seen[1]?.auditAtAnswer.map((c) => [c.action, c.decision])).toEqual([
        ['state.get', 'allowed'],
        ['history.page', 'denied'],
      ]);
    } finally {
      await h.close();
    }
  });

  it('the end of a run waits for the rows of its allowed calls', async () => {
    const h = setup([STATE_GET, STATE_GET, STATE_GET]);
    try {
      const outcome = await h.run();
      expect(h.seen.map((s) => s.outcome)).toEqual(['answered', 'answered', 'answered']);
      expect(outcome.status).toBe('completed');
      expect(h.stores.runs.get(outcome.run_id)?.api_calls.map((c) => [c.action, c.decision])).toEqual([
        ['state.get', 'allowed'],
        ['state.get', 'allowed'],
        ['state.get', 'allowed'],
      ]);
    } finally {
      await h.close();
    }
  });

  it('a failed audit write of an allowed call fails the run with the store error', async () => {
    const h = setup([STATE_GET]);
    h.stores.runs.addApiCalls = () => {
      throw new LbotError('store.unavailable', 'disk full');
    };
    try {
      const outcome = await h.run();
      expect(outcome.status).toBe('failed');
      expect(outcome.error).toMatchObject({ code: 'store.unavailable' });
    } finally {
      await h.close();
    }
  });

  it('a failed audit write refuses the call, is logged, and fails the run with the store error', async () => {
    const h = setup();
    h.stores.runs.addApiCalls = () => {
      throw new LbotError('store.unavailable', 'disk full');
    };
    try {
      const outcome = await h.run();
      expect(h.seen.map((s) => [s.outcome, s.reason])).toEqual([['refused', 'audit_failed']]);
      expect(outcome.status).toBe('failed');
      expect(outcome.error).toMatchObject({ code: 'store.unavailable' });
      expect(h.stores.runs.get(outcome.run_id)).toMatchObject({ status: 'failed', error: { code: 'store.unavailable' } });
      expect(h.warnings.some((w) => w.includes('writing the audit of proxy calls failed') && w.includes(outcome.run_id))).toBe(true);
    } finally {
      await h.close();
    }
  });
});
