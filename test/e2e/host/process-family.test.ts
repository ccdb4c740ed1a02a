// A runner's grandchild that leaves the process group with setsid ends with the plugin process: the
// host tracks the whole family (an inherited env marker), not only the process group.
import { readdirSync, readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, expect, it } from 'vitest';
import { LBOT_BIN, REPO_ROOT } from './harness.js';

const temps: string[] = [];
afterEach(() => {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});

function sleepers(arg: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (argv[0]?.endsWith('sleep') && argv.includes(arg)) out.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

it('ends a setsid grandchild of a runner when the run is over', async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'lbot-family-'));
  temps.push(root);
  const marker = String(Date.now() % 1_000_000_000);
  const config = path.join(root, 'config.json');
  writeFileSync(config, JSON.stringify({ marker }));
  const r = await execa(
    process.execPath,
    [
      LBOT_BIN,
      '--data-dir',
      path.join(root, 'data'),
      'run',
      '--event',
      path.join(REPO_ROOT, 'fixtures/events/msg.json'),
      '--plugin',
      path.join(REPO_ROOT, 'fixtures/runners/setsid-child'),
      '--config',
      config,
    ],
    { reject: false },
  );
  expect(r.stdout).toContain('left a grandchild behind');
  expect(r.exitCode).toBe(0);
  const left = sleepers(`0.${marker}`);
  for (const pid of left) process.kill(pid, 'SIGKILL');
  expect(left).toEqual([]);
});

it('ends a setsid grandchild of an MCP stdio server when the server stops', async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'lbot-family-'));
  temps.push(root);
  const marker = String((Date.now() + 7) % 1_000_000_000);
  const data = path.join(root, 'data');
  const lbot = (args: string[]) => execa(process.execPath, [LBOT_BIN, '--data-dir', data, ...args], { reject: false });
  expect((await lbot(['mcp', 'add', 'fam', '--', 'node', path.join(REPO_ROOT, 'fixtures/mcp/setsid-child.js'), marker])).exitCode).toBe(0);
  const t = await lbot(['--json', 'mcp', 'test', 'fam']);
  expect(t.stdout).toContain('"status":"connected"');
  const left = sleepers(`0.${marker}`);
  for (const pid of left) process.kill(pid, 'SIGKILL');
  expect(left).toEqual([]);
});
