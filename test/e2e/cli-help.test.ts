// The binary loads only the command module a command line names (commands/index.ts): its help and version
// output is still the text of the whole command tree, byte for byte.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { createProgram } from '../../src/cli.js';
import { loadAllCommands } from '../../src/commands/index.js';
import { LBOT_VERSION } from '../../src/package-root.js';

const BIN = path.join(import.meta.dirname, '..', '..', 'bin', 'lbot.js');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lbot-help-'));
const full = createProgram(
  () => {
    throw new Error('an action ran');
  },
  await loadAllCommands(),
);

async function lbot(args: string[]) {
  const r = await execa(process.execPath, [BIN, ...args], { reject: false, stripFinalNewline: false, env: { NO_COLOR: '1', LBOT_HOME: dataDir } });
  return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
}

function helpOf(names: readonly string[]): string {
  let cmd: Command = full;
  for (const name of names) cmd = cmd.commands.find((c) => c.name() === name) ?? cmd;
  let out = '';
  for (let c: Command | null = cmd; c; c = c.parent)
    c.configureOutput({ writeOut: (s) => (out += s), getOutHelpWidth: () => 80, getOutHasColors: () => false });
  cmd.outputHelp();
  return out;
}

describe('help and version from the lbot binary', () => {
  it('lbot --version prints the version alone', async () => {
    const r = await lbot(['--version']);
    expect(r).toEqual({ exitCode: 0, stdout: `${LBOT_VERSION}\n`, stderr: '' });
  });

  it.concurrent.each([
    [['--help'], []],
    [['help'], []],
    [['--help', 'config'], []],
    [['config', '--help'], ['config']],
    [['help', 'config'], ['config']],
    [
      ['--json', 'runner', 'list', '--help'],
      ['runner', 'list'],
    ],
    [
      ['runner', 'init', '--help'],
      ['runner', 'init'],
    ],
    [['conversations', '--help'], ['conversations']],
    [
      ['box', 'exec', '--help'],
      ['box', 'exec'],
    ],
    [
      ['serve', 'token', '--help'],
      ['serve', 'token'],
    ],
  ])('lbot %j prints the help of %j from the whole tree', async (args, names) => {
    const r = await lbot(args);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(helpOf(names));
  });
});
