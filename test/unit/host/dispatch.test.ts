// The dispatch policy, pure: the shared table, then what only some entry points can ask for
// (a named binding, a served-runner fallback).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src/core/config.js';
import { LbotError } from '../../../src/core/errors.js';
import { dispatch, soleRunner } from '../../../src/core/host/dispatch.js';
import { EventEnvelopeSchema } from '../../../src/core/protocol/event.js';
import { DISPATCH_CASES, DISPATCH_CONFIG, ECHO, SCRIPTED } from '../../helpers/dispatch-table.js';
import { FIXTURE_EVENTS } from '../../helpers/plugins.js';
import { binding, descriptor, envelope } from './fixtures.js';

const config = ConfigSchema.parse(DISPATCH_CONFIG);
const event = (file: string) => EventEnvelopeSchema.parse(JSON.parse(readFileSync(path.join(FIXTURE_EVENTS, file), 'utf8')));

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof LbotError) return err.code;
    throw err;
  }
  throw new Error('expected an LbotError');
}

describe('dispatch: the shared table', () => {
  for (const c of DISPATCH_CASES) {
    it(c.name, () => {
      const req = { event: event(c.event), config, runner: c.runner, runnerConfig: c.runnerConfig };
      if ('error' in c.expected) {
        expect(codeOf(() => dispatch(req))).toBe(c.expected.error);
        return;
      }
      const picked = dispatch(req);
      expect({ binding_id: picked.binding_id, runner_id: picked.runner_id }).toEqual({ binding_id: c.expected.binding_id, runner_id: c.expected.runner_id });
      if (c.runnerConfig) expect(picked.runner_config).toEqual(c.runnerConfig);
    });
  }
});

describe('dispatch: named bindings and the fallback', () => {
  const msg = event('msg.json');

  it('a given binding (file, inline) runs as it is, or with the named runner (alias resolved) and config', () => {
    const given = binding({ binding_id: 'mine', runner_id: SCRIPTED, runner_config: { script: [] } });
    expect(dispatch({ event: msg, config, binding: { binding: given, source: 'given' } })).toBe(given);
    const renamed = dispatch({ event: msg, config, binding: { binding: given, source: 'given' }, runner: 'greeter', runnerConfig: { prefix: 'x' } });
    expect(renamed).toMatchObject({ binding_id: 'mine', runner_id: ECHO, runner_config: { prefix: 'x' } });
    expect(given.runner_config).toEqual({ script: [] });
  });

  it('a configured binding keeps its runner: naming another one is refused, naming its own (or its alias) is not', () => {
    const configured = binding({ binding_id: 'ops', runner_id: ECHO });
    expect(codeOf(() => dispatch({ event: msg, config, binding: { binding: configured, source: 'configured' }, runner: SCRIPTED }))).toBe('invalid_argument');
    expect(dispatch({ event: msg, config, binding: { binding: configured, source: 'configured' }, runner: 'greeter' })).toBe(configured);
  });

  it('a named binding wins over the configured bindings that match', () => {
    const given = binding({ binding_id: 'mine', runner_id: SCRIPTED, event_types: ['other.type'] });
    expect(dispatch({ event: msg, config, binding: { binding: given, source: 'given' } }).binding_id).toBe('mine');
  });

  it('falls back to the sole served runner only when nothing is named and no binding matches', () => {
    const served = { runners: [descriptor()], warnings: [] };
    expect(dispatch({ event: event('friend.json'), config, fallback: { catalog: served, from: '/plugins' } })).toMatchObject({
      binding_id: `cli:${SCRIPTED}`,
      runner_id: SCRIPTED,
    });
    expect(dispatch({ event: msg, config, fallback: { catalog: served, from: '/plugins' } }).binding_id).toBe('a-msg');
  });

  it('a fallback with several runners and no single default is runner.not_found, naming them', () => {
    const other = { ...descriptor(), id: ECHO, plugin_name: 'echo' };
    expect(soleRunner({ runners: [descriptor(), { ...other, runner_name: 'second' }], warnings: [] }, '/p').id).toBe(SCRIPTED);
    try {
      soleRunner({ runners: [descriptor(), other], warnings: ['bad yaml'] }, '/p');
      expect.unreachable();
    } catch (err) {
      expect(err).toMatchObject({ code: 'runner.not_found', details: { from: '/p', runners: [SCRIPTED, ECHO], warnings: ['bad yaml'] } });
    }
    expect(codeOf(() => soleRunner({ runners: [], warnings: [] }, '/p'))).toBe('runner.not_found');
  });

  it('disabled bindings never run, and the unhandled error names the event', () => {
    const off = ConfigSchema.parse({ bindings: [{ binding_id: 'off', runner_id: ECHO, event_types: ['message.received'], enabled: false }] });
    const e = envelope();
    try {
      dispatch({ event: e, config: off });
      expect.unreachable();
    } catch (err) {
      expect(err).toMatchObject({ code: 'binding.not_found', details: { event_id: e.event_id, event_type: e.event_type } });
    }
  });
});
