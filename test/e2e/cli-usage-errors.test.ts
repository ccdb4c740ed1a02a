// The binary's side of the usage-error contract (every command's parse is covered in-process by
// test/unit/commands/usage-errors.test.ts): what reaches stderr, stdout and the exit code.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const BIN = path.join(import.meta.dirname, '..', '..', 'bin', 'lbot.js');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lbot-usage-'));

async function lbot(args: string[]) {
  const r = await execa(process.execPath, [BIN, '--data-dir', dataDir, ...args], { reject: false, env: { NO_COLOR: '1' } });
  return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
}

function expectUsage(r: Awaited<ReturnType<typeof lbot>>): void {
  expect(r.exitCode, r.stderr).toBe(2);
  expect(r.stderr).toMatch(/^lbot: error\[usage\]: .+\n {2}hint: .+/m);
  // Nothing of commander's own wording or a stack.
  expect(r.stderr).not.toMatch(/^error: |\(run with --help|\n\s+at /m);
}

describe('usage errors from the lbot binary', () => {
  it.concurrent.each([['rnu'], ['run', '--evnet', 'e.json'], ['runs', 'lst'], ['box', 'exec', '--no-such-flag', '--', 'true'], ['state', 'get']])(
    'lbot %s --json prints the error envelope as its only stdout line',
    async (...args) => {
      const r = await lbot([...args, '--json']);
      expectUsage(r);
      const lines = r.stdout.split('\n').filter((l) => l !== '');
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0] ?? '')).toMatchObject({ ok: false, error: { code: 'usage', retryable: false, details: { reason: expect.any(String) } } });
    },
  );

  it('without --json stdout stays empty and stderr names the typo and its closest flag', async () => {
    const r = await lbot(['run', '--evnet', 'e.json']);
    expectUsage(r);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain("lbot: error[usage]: unknown option '--evnet'\n  hint: did you mean --event? run `lbot run --help` for usage");
  });

  it('options of a sandboxed command without `--` get a hint to add it', async () => {
    const r = await lbot(['box', 'exec', 'python3', '-c', 'print(1)']);
    expectUsage(r);
    expect(r.stderr).toContain('hint: put `--` before the command, so its options are its own: lbot box exec [options] -- python3 -c print(1)');
  });

  it('a command group without its subcommand shows its help, then the usage error', async () => {
    const r = await lbot(['box']);
    expectUsage(r);
    expect(r.stderr).toContain('Usage: lbot box');
    expect(r.stderr).toContain('error[usage]: lbot box needs a subcommand');
  });

  it('a --plugin directory that is not there is named as such', async () => {
    const missing = path.join(dataDir, 'no-such-plugin');
    const r = await lbot(['run', '--plugin', missing, '--event', 'e.json', '--json']);
    expect(r.exitCode).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: 'not_found', message: `--plugin ${missing}: no such directory` } });
    const file = await lbot(['runner', 'list', '--plugin', BIN]);
    expect(file.exitCode).toBe(2);
    expect(file.stderr).toContain(`--plugin ${BIN}: not a directory`);
  });
});
