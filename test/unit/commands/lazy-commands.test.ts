// Lazy command loading (commands/index.ts): a command line loads only the module of the command it names,
// and the tree it gets answers exactly as the whole tree does (help of every command, the table of names).
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { createProgram } from '../../../src/cli.js';
import { COMMAND_NAMES, loadAllCommands, loadCommandsFor, readCommandLine, type Register } from '../../../src/commands/index.js';

const notRun = () => {
  throw new Error('an action ran');
};
const program = (commands: readonly Register[]): Command => createProgram(notRun, commands);
const full = program(await loadAllCommands());

function paths(cmd: Command, prefix: string[] = []): string[][] {
  return cmd.commands.flatMap((c) => [[...prefix, c.name()], ...paths(c, [...prefix, c.name()])]);
}

function find(root: Command, path: readonly string[]): Command {
  let cmd = root;
  for (const name of path) {
    const next = cmd.commands.find((c) => c.name() === name);
    if (!next) throw new Error(`no command ${path.join(' ')}`);
    cmd = next;
  }
  return cmd;
}

/** All a `--help` prints for `cmd`: commander's text and every addHelpText around it. */
function helpText(cmd: Command): string {
  let out = '';
  for (let c: Command | null = cmd; c; c = c.parent)
    c.configureOutput({ writeOut: (s) => (out += s), getOutHelpWidth: () => 80, getOutHasColors: () => false });
  cmd.outputHelp();
  return out;
}

describe('lazy command loading', () => {
  it('names every top-level command of the tree, and only those', () => {
    const top = full.commands.map((c) => c.name()).filter((n) => n !== 'help');
    expect([...COMMAND_NAMES].sort()).toEqual([...top].sort());
  });

  it.each([
    [['config', 'get', 'box'], 'config'],
    [['--data-dir', 'd', '--json', 'runner', 'list'], 'runner'],
    [['--data-dir=d', '--plugins', 'p', 'runs', 'list'], 'runs'],
    [['help', 'config'], 'config'],
    [['--verbose', 'help', 'box', 'exec'], 'box'],
    [['--store', 'postgres://h/db', 'db', 'status'], 'db'],
  ])('%j names %s', (args, name) => {
    expect(readCommandLine(args)).toEqual({ kind: 'command', name });
  });

  it.each([[['--version']], [['-V']], [['--data-dir', 'd', '--json', '--version']], [['--version', 'config']]])('%j asks for the version', (args) => {
    expect(readCommandLine(args)).toEqual({ kind: 'version' });
  });

  it('skips the value of every root option that takes one', () => {
    const valued = full.options.filter((o) => o.required && o.long !== undefined);
    expect(valued.length).toBeGreaterThan(0);
    for (const o of valued) expect(readCommandLine([o.long ?? '', 'config', 'runs', 'list']), o.long).toEqual({ kind: 'command', name: 'runs' });
  });

  // Anything commander would answer at the root (help, version, typos, unknown flags) needs the whole tree.
  it.each([
    [[]],
    [['--help']],
    [['--help', 'config']],
    [['help', '--version']],
    [['confg']],
    [['--bogus', 'config']],
    [['help']],
    [['--', 'config']],
    [['--data-dir']],
  ])('%j names none', (args) => {
    expect(readCommandLine(args)).toEqual({ kind: 'other' });
  });

  it('loads one module for a named command, none for --version alone, all otherwise', async () => {
    expect(await loadCommandsFor(['--version'])).toHaveLength(0);
    expect(await loadCommandsFor(['-V'])).toHaveLength(0);
    expect(await loadCommandsFor(['--data-dir', 'd', '--version'])).toHaveLength(0);
    expect(await loadCommandsFor(['config', 'get', 'box'])).toHaveLength(1);
    const few = program(await loadCommandsFor(['runs', 'list']));
    expect(few.commands.map((c) => c.name()).sort()).toEqual(['artifacts', 'conversations', 'events', 'runs', 'transcript']);
    expect(await loadCommandsFor(['--help'])).toHaveLength((await loadAllCommands()).length);
  });

  const all = paths(full).filter((p) => p.at(-1) !== 'help');
  it('walks the whole tree', () => {
    expect(all.length).toBeGreaterThan(60);
  });

  it.each(all.map((p) => [p.join(' '), p] as const))('lbot %s --help is the same text as from the whole tree', async (_name, path) => {
    const lazy = program(await loadCommandsFor([...path, '--help']));
    expect(helpText(find(lazy, path))).toBe(helpText(find(full, path)));
  });
});
