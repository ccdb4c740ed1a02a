// Every platform fixture normalizes to the checked-in golden result (UPDATE_GOLDEN=1 rewrites the goldens).
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { normalizePlatformPayload, type NormalizeResult } from '../../../src/core/gateway/index.js';
import { isRecord, jsonByteLength } from '../../../src/core/json.js';
import { EventEnvelopeSchema } from '../../../src/core/protocol/event.js';
import { FIXTURE_CASES, FIXTURE_ROOT, loadCase } from './fixture-table.js';

const root = fileURLToPath(FIXTURE_ROOT);
const goldenRoot = fileURLToPath(new URL('./golden/', import.meta.url));
const updating = process.env.UPDATE_GOLDEN === '1';

/** Verification and interaction tokens a payload carries; they stay in the raw payload, never in the envelope. */
function tokensIn(payload: unknown): string[] {
  if (!isRecord(payload)) return [];
  const header = isRecord(payload.header) ? payload.header : {};
  return [payload.token, header.token].filter((t): t is string => typeof t === 'string');
}

/** What a golden file holds: the result without `raw`, which is the input itself. */
function goldenOf(result: NormalizeResult): unknown {
  if (result.kind === 'event') return { kind: result.kind, platform: result.platform, envelope: result.envelope };
  return result;
}

function goldenPath(file: string): string {
  return join(goldenRoot, file.replace(/\.json$/, '.golden.json'));
}

describe('platform fixtures → golden results', () => {
  it('covers every fixture file exactly once', () => {
    const onDisk = readdirSync(root, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.split('\\').join('/'))
      .sort();
    expect(FIXTURE_CASES.map((c) => c.file).sort()).toEqual(onDisk);
  });

  it('has no golden file without a fixture', () => {
    const goldens = readdirSync(goldenRoot, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.golden.json'))
      .map((f) => f.split('\\').join('/'))
      .sort();
    expect(goldens).toEqual(FIXTURE_CASES.map((c) => c.file.replace(/\.json$/, '.golden.json')).sort());
  });

  for (const c of FIXTURE_CASES) {
    describe(c.file, () => {
      const payload = loadCase(c);
      const result = normalizePlatformPayload(c.platform, payload);

      it(`normalizes to ${c.expect.kind === 'event' ? c.expect.event_type : c.expect.kind}`, () => {
        expect(result.kind).toBe(c.expect.kind);
        expect(result.platform).toBe(c.platform);
        if (result.kind === 'event' && c.expect.kind === 'event') {
          const env = result.envelope;
          expect(EventEnvelopeSchema.parse(JSON.parse(JSON.stringify(env)))).toEqual(env);
          expect(env.event_type).toBe(c.expect.event_type);
          expect(env.actor?.actor_id ?? null).toBe(c.expect.actor_id);
          expect(env.conversation_id).toBe(c.expect.conversation_id);
          expect(env.source).toBe('platform');
          expect(env.event_id.startsWith(`${c.platform}:`)).toBe(true);
          expect(env.raw_ref).toEqual({ artifact_id: null, storage_key: null });
          expect(env.delivery.surface).toBe('platform');
          expect(result.raw).toBe(payload);
          expect(jsonByteLength(env.data)).toBeLessThan(1024);
          for (const secret of tokensIn(payload)) expect(JSON.stringify(env)).not.toContain(secret);
        } else if (result.kind === 'challenge' && c.expect.kind === 'challenge') {
          expect(result.response).toEqual(c.expect.response);
        } else if (result.kind === 'ignored' && c.expect.kind === 'ignored') {
          expect(result.reason).toMatch(c.expect.reason);
        }
      });

      it('is deterministic (a redelivery gets the same event id)', () => {
        expect(normalizePlatformPayload(c.platform, structuredClone(payload))).toEqual(result);
      });

      it('matches its golden file', () => {
        const path = goldenPath(c.file);
        const actual = `${JSON.stringify(goldenOf(result), null, 2)}\n`;
        if (updating) {
          mkdirSync(dirname(path), { recursive: true });
          writeFileSync(path, actual);
        }
        expect(existsSync(path), `${path} is missing; run with UPDATE_GOLDEN=1 to create it`).toBe(true);
        expect(actual).toBe(readFileSync(path, 'utf8'));
      });
    });
  }
});
