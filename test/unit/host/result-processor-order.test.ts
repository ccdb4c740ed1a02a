// When the result processor writes what a runner sent: a tool notice's records wait for the next turn of the
// event loop (the model call written with it goes upstream first), a message is written at once, and both
// keep their order and are durable once the processor is flushed.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ResultProcessor } from '../../../src/core/host/result-processor.js';
import { asAsyncStores } from '../../../src/core/stores/async.js';
import { openSqliteStores, type SqliteStores } from '../../../src/core/stores/sqlite/open.js';
import { binding, descriptor, envelope, runSession } from './fixtures.js';

let dir: string;
let stores: SqliteStores;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'lbot-results-'));
  stores = openSqliteStores(dir);
});

afterEach(async () => {
  stores.close();
  await rm(dir, { recursive: true, force: true });
});

function processor(): { p: ResultProcessor; types: () => string[] } {
  const d = descriptor();
  const b = binding();
  const event = envelope();
  const session = runSession('run-1', d, b, event, { plugin_identity: 'acme/scripted', startedAt: 1 });
  stores.runs.create({ run_id: 'run-1', runner_id: d.id, binding_id: b.binding_id, event_id: event.event_id, conversation_id: 'c1', started_at: 1 });
  const p = new ResultProcessor({
    session,
    event,
    binding: b,
    stores: asAsyncStores(stores),
    streaming: true,
    nowS: () => 2,
    stateValueBytes: 1024,
    deliver: () => undefined,
    observe: (notice) => stores.runs.addObserved('run-1', notice),
    warn: () => undefined,
  });
  const types = () =>
    stores.events
      .page({ conversation_id: 'c1', limit: 50 })
      .items.sort((a, b) => a.seq - b.seq)
      .map((e) => e.event_type);
  return { p, types };
}

/** Lets every queued promise job run, but not the next turn of the event loop. */
const drainJobs = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

describe('result processor write timing', () => {
  it('writes a tool notice on the next turn of the event loop, in order with what follows it', async () => {
    const { p, types } = processor();
    p.handle({ type: 'tool.call.started', data: { tool_name: 'exec', tool_call_id: 'c1', parameters: {} } }, 80);
    p.handle({ type: 'tool.call.completed', data: { tool_name: 'exec', tool_call_id: 'c1', result: 'ok' } }, 80);
    p.handle({ type: 'message.completed', data: { message: { role: 'assistant', content: 'done' } } }, 80);
    await drainJobs();
    expect(types()).toEqual([]);
    await new Promise((r) => setImmediate(r));
    await p.flush();
    expect(types()).toEqual(['tool.call.started', 'tool.call.completed']);
    expect(stores.runs.get('run-1')?.observed.map((o) => o.type)).toEqual(['tool.call.started', 'tool.call.completed']);
    expect(stores.transcript.page({ conversation_id: 'c1', limit: 10 }).items.map((t) => t.content)).toEqual(['done']);
  });

  it('writes a message at once when nothing is held back', async () => {
    const { p } = processor();
    p.handle({ type: 'message.completed', data: { message: { role: 'assistant', content: 'now' } } }, 80);
    await drainJobs();
    expect(stores.transcript.page({ conversation_id: 'c1', limit: 10 }).items.map((t) => t.content)).toEqual(['now']);
  });
});
