// The request a queued run carries: secrets stay out of the queue, and a row is validated as the HTTP body it
// came from was, so a tampered or corrupt row is refused instead of choosing a worker process's environment.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src/core/config.js';
import { defaultCliBinding } from '../../../src/core/protocol/binding.js';
import { parseEnvelope } from '../../../src/core/host/event-input.js';
import { decodeRequest, encodeRequest } from '../../../src/runtime/queue/request.js';
import { queueNameOf, laneAndQueue } from '../../../src/runtime/queue/lane-name.js';

const event = parseEnvelope(JSON.parse(readFileSync(new URL('../../../fixtures/events/msg.json', import.meta.url), 'utf8')), 'fixture', 1 << 20);
const binding = { ...defaultCliBinding('plugin:acme/echo/default'), binding_id: 'desk', env: { API_TOKEN: 'from-the-operator' } };
const config = ConfigSchema.parse({ bindings: [{ ...binding }] });

describe('queued run requests', () => {
  it('leave the binding env out of the queue and take it from the worker config of the same binding', () => {
    const json = encodeRequest({ event, binding, raw: { update_id: 1 } });
    expect(json).not.toContain('from-the-operator');
    const back = decodeRequest(json, config);
    expect(back.binding.env).toEqual({ API_TOKEN: 'from-the-operator' });
    expect(back.event.event_id).toBe(event.event_id);
    expect(back.raw).toEqual({ update_id: 1 });
    expect(decodeRequest(json, ConfigSchema.parse({})).binding.env).toEqual({});
  });

  it('ignore an env written into a row, and refuse rows that are not a request', () => {
    const tampered = JSON.stringify({ event, binding: { ...binding, env: { LD_PRELOAD: '/tmp/evil.so' } } });
    expect(decodeRequest(tampered, ConfigSchema.parse({})).binding.env).toEqual({});
    for (const bad of ['not json', '[]', JSON.stringify({ event: {}, binding }), JSON.stringify({ event, binding: { runner_id: 1 } })])
      expect(() => decodeRequest(bad, config)).toThrow(expect.objectContaining({ code: expect.stringMatching(/invalid_argument|event\./) }));
  });

  it('name one queue per (binding, conversation), bounded in length whatever the conversation id', () => {
    const a = laneAndQueue(binding, { conversation_id: 'c1' });
    expect(a.queue).toBe(laneAndQueue(binding, { conversation_id: 'c1' }).queue);
    expect(a.queue).not.toBe(laneAndQueue(binding, { conversation_id: 'c2' }).queue);
    expect(a.queue).not.toBe(laneAndQueue({ ...binding, binding_id: 'other' }, { conversation_id: 'c1' }).queue);
    expect(laneAndQueue(binding, { conversation_id: null })).toEqual({ lane: null, queue: null });
    expect(laneAndQueue({ ...binding, run_policy: 'parallel' }, { conversation_id: 'c1' }).queue).toBeNull();
    const long = laneAndQueue(binding, { conversation_id: 'x'.repeat(100_000) });
    expect(long.lane && queueNameOf(long.lane).length).toBeLessThanOrEqual(64);
  });
});
