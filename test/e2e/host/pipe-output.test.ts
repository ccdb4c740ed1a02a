// Large stdout through a pipe with a slow reader: every byte arrives (artifacts read, --json output).
import { createHash } from 'node:crypto';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { done, emit, LBOT_BIN, say, scenario, type Scenario } from './harness.js';

const SIZE = 1000 * 1024;

/** Deterministic, incompressible-looking bytes. */
function payload(): Buffer {
  const b = Buffer.alloc(SIZE);
  let x = 0x9e3779b9;
  for (let i = 0; i < SIZE; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** Runs `lbot args | (sleep 1; consumer)` through a real shell pipe and returns the consumer's stdout. */
async function throughSlowPipe(s: Scenario, args: readonly string[], consumer: string): Promise<{ out: string; lbotExit: string; stderr: string }> {
  const quoted = [process.execPath, LBOT_BIN, '--data-dir', s.dataDir, '--plugins', s.plugins.pluginsDir, ...args]
    .map((a) => `'${a.replace(/'/g, `'\\''`)}'`)
    .join(' ');
  // The reader sleeps before reading so the pipe buffer fills and lbot's writes meet a full pipe.
  const script = `${quoted} | (sleep 1; ${consumer}); echo "exit=\${PIPESTATUS[0]}" >&2`;
  const r = await execa('bash', ['-c', script], {
    cwd: s.root,
    reject: false,
    stripFinalNewline: false,
    env: { LBOT_HOME: undefined },
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { out: r.stdout, lbotExit: /exit=(\d+)/.exec(r.stderr)?.[1] ?? `none: ${r.stderr}`, stderr: r.stderr };
}

describe('stdout to a slow pipe', () => {
  it('artifacts read delivers all of a 1,000 KiB artifact, raw and --json', async () => {
    const s = await scenario();
    const bytes = payload();
    const made = await s.run([
      emit('artifact.created', { artifact_id: 'big', artifact_type: 'file', name: 'big.bin', content_base64: bytes.toString('base64') }),
      say('ok'),
      done(),
    ]);
    expect(made.exitCode, made.stderr).toBe(0);
    const meta = await s.json(['artifacts', 'show', 'big']);
    expect(meta).toMatchObject({ size_bytes: SIZE, sha256: sha256(bytes) });

    const raw = await throughSlowPipe(s, ['artifacts', 'read', 'big'], 'sha256sum');
    expect(raw.lbotExit).toBe('0');
    expect(raw.out.split(/\s/)[0]).toBe(sha256(bytes));

    const json = await throughSlowPipe(s, ['--json', 'artifacts', 'read', 'big'], 'cat');
    expect(json.lbotExit).toBe('0');
    const parsed = JSON.parse(json.out) as { content_base64: string; has_more: boolean };
    expect(parsed.has_more).toBe(false);
    expect(sha256(Buffer.from(parsed.content_base64, 'base64'))).toBe(sha256(bytes));

    // A reader that stops early: lbot ends quietly, no EPIPE crash.
    const head = await throughSlowPipe(s, ['artifacts', 'read', 'big'], 'head -c 100 | wc -c');
    expect(head.out.trim()).toBe('100');
    expect(head.lbotExit, head.stderr).toBe('0');
    expect(head.stderr).not.toMatch(/EPIPE|Unhandled|error/i);
  });

  it('a large --json listing arrives whole', async () => {
    const s = await scenario();
    const steps = Array.from({ length: 600 }, (_, i) =>
      emit('artifact.created', { artifact_id: `a-${i}`, artifact_type: 'file', name: `${'n'.repeat(200)}-${i}.txt`, content_base64: 'YQ==' }),
    );
    const made = await s.run([...steps, say('ok'), done()]);
    expect(made.exitCode, made.stderr).toBe(0);
    const direct = await s.lbot(['--json', 'artifacts', 'list', '--limit', '1000']);
    expect(direct.exitCode, direct.stderr).toBe(0);
    expect(direct.stdout.length).toBeGreaterThan(128 * 1024);
    const piped = await throughSlowPipe(s, ['--json', 'artifacts', 'list', '--limit', '1000'], 'cat');
    expect(piped.lbotExit).toBe('0');
    expect(sha256(piped.out)).toBe(sha256(direct.stdout));
    expect(JSON.parse(piped.out)).toHaveLength(600);
  });
});
