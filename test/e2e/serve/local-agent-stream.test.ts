// The bundled local agent under `lbot serve`: its reply streams to an SSE client while the model is still
// answering. The fake upstream holds its last event until the test has seen the first delta, so the
// order is proven without timing anything.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { FakeScriptSchema } from '../../../src/runtime/models/fake-server-script.js';
import { startFakeModelServer, type FakeServer } from '../../../src/runtime/models/fake-server.js';
import { startServe, type ServeProcess } from '../../helpers/serve.js';

const KEY = 'sk-e2e-stream-KEY';
const cleanup: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const undo of cleanup.splice(0).reverse()) await undo();
});

type SseEvent = { event: string; data: Record<string, unknown> };

/** Reads SSE events off a response body one at a time. */
async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.+)$/m.exec(block)?.[1];
      const data = /^data: (.+)$/m.exec(block)?.[1];
      if (event && data) yield { event, data: JSON.parse(data) as Record<string, unknown> };
    }
  }
}

it('the first text delta reaches the SSE client before the model has sent its last event', async () => {
  const model: FakeServer = await startFakeModelServer(
    FakeScriptSchema.parse({ api_key: KEY, models: ['gpt-4o-mini'], steps: [{ content: 'The answer is 42.', hold_last_event: true }] }),
  );
  cleanup.push(() => model.close());
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-stream-'));
  cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
  await writeFile(
    path.join(dataDir, 'lbot.config.json'),
    JSON.stringify({
      models: [{ id: 'gpt', provider: 'openai', base_url: model.openaiBaseUrl, model: 'gpt-4o-mini', api_key_env: 'STREAM_KEY', max_retries: 0 }],
    }),
  );
  const serve: ServeProcess = await startServe({ dataDir, env: { STREAM_KEY: KEY } });
  cleanup.push(() => serve.stop());

  const started = await serve.request('POST', '/v1/runs', {
    event: {
      event_id: `ev-${randomUUID()}`,
      event_type: 'message.received',
      source: 'api',
      conversation_id: 'c-stream',
      actor: { actor_type: 'user', actor_id: 'u1', actor_name: 'Ann' },
      input: { text: 'what is 6*7?', contents: [{ type: 'text', text: 'what is 6*7?' }], attachments: [] },
      delivery: { surface: 'api', supports_streaming: true },
    },
    runner_id: 'plugin:langbot/local-agent/default',
    config: { model: { primary: 'gpt', fallbacks: [] } },
  });
  expect(started.status, started.text).toBe(202);
  const runId = (started.json as { run_id: string }).run_id;
  const res = await fetch(`${serve.url}/v1/runs/${runId}/results`, { headers: { authorization: `Bearer ${serve.token}`, accept: 'text/event-stream' } });
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  if (!res.body) throw new Error('no SSE body');

  const seen: SseEvent[] = [];
  let heldAtFirstDelta: number | null = null;
  for await (const ev of sseEvents(res.body)) {
    seen.push(ev);
    if (ev.event === 'message.delta' && heldAtFirstDelta === null) {
      heldAtFirstDelta = model.heldStreams;
      model.release();
    }
  }
  // The model was still holding its last event when the first delta arrived.
  expect(heldAtFirstDelta).toBe(1);
  const types = seen.map((e) => e.event);
  expect(types.indexOf('message.delta')).toBeLessThan(types.indexOf('message.completed'));
  expect(types.at(-1)).toBe('run.summary');
  const completed = seen.find((e) => e.event === 'message.completed');
  expect(JSON.stringify(completed?.data)).toContain('The answer is 42.');
});
