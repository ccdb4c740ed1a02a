// The error contract for the command line itself, over the real command tree in-process: every command,
// given a flag it does not have, a typo of its name or no required input, fails its parse with lbot's
// `usage` error (exit 2 in the error table) and a hint; nothing reaches an action. The binary's printing of
// that error is tested in test/e2e/cli-usage-errors.test.ts.
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { createProgram, ParseEnded } from '../../../src/cli.js';
import { loadAllCommands } from '../../../src/commands/index.js';
import { errorClassOf } from '../../../src/core/error-table.js';
import { isLbotError, type LbotError } from '../../../src/core/errors.js';

type Leaf = { path: string[]; cmd: Command };

function leaves(cmd: Command, prefix: string[] = []): Leaf[] {
  const subs = cmd.commands.filter((c) => c.name() !== 'help');
  if (subs.length === 0) return [{ path: prefix, cmd }];
  // A command with flags of its own runs by itself too (`serve` beside `serve token`).
  const runs = prefix.length > 0 && cmd.options.some((o) => o.long !== '--help');
  return [...(runs ? [{ path: prefix, cmd }] : []), ...subs.flatMap((c) => leaves(c, [...prefix, c.name()]))];
}

const all = await loadAllCommands();

function program(): Command {
  const p = createProgram(() => {
    throw new Error('an action ran: the parse should have failed');
  }, all);
  // Help shown for a group without its subcommand stays out of the test output.
  const quiet = (c: Command): void => {
    c.configureOutput({ writeErr: () => undefined, writeOut: () => undefined, outputError: () => undefined });
    c.commands.forEach(quiet);
  };
  quiet(p);
  return p;
}

const commands = leaves(program());

async function parseError(args: string[]): Promise<LbotError> {
  try {
    await program().parseAsync(args, { from: 'user' });
  } catch (err) {
    if (isLbotError(err)) return err;
    throw err;
  }
  throw new Error(`lbot ${args.join(' ')} parsed`);
}

/** Arguments that satisfy a command's required arguments and options, so only the tested mistake remains. */
function filled(cmd: Command): string[] {
  const args: string[] = [];
  for (const o of cmd.options) if (o.mandatory && o.long) args.push(o.long, 'x');
  for (const a of cmd.registeredArguments) if (a.required) args.push('x');
  return args;
}

function expectUsage(e: LbotError, name: string[]): void {
  expect(e.code).toBe('usage');
  expect(errorClassOf(e.code).exit).toBe(2);
  expect(e.hint).toMatch(/--help` for usage|before the command/);
  expect(e.message).not.toMatch(/^error: /);
  if (e.hint?.includes('--help')) expect(e.hint).toContain(`lbot ${name.join(' ')}`.trim());
}

describe('usage errors on every command', () => {
  it('walks the real command tree', () => {
    expect(commands.length).toBeGreaterThan(40);
  });

  it.each(commands.map((c) => [c.path.join(' '), c] as const))('lbot %s --no-such-flag', async (_name, leaf) => {
    const e = await parseError([...leaf.path, ...filled(leaf.cmd), '--no-such-flag']);
    expectUsage(e, leaf.path);
    expect(e.message).toBe("unknown option '--no-such-flag'");
    expect(e.details.reason).toBe('unknown_option');
  });

  const required = commands.filter((c) => c.cmd.registeredArguments.some((a) => a.required) || c.cmd.options.some((o) => o.mandatory));
  it.each(required.map((c) => [c.path.join(' '), c] as const))('lbot %s without its required input', async (_name, leaf) => {
    const e = await parseError(leaf.path);
    expectUsage(e, leaf.path);
    expect(e.details.reason).toMatch(/^missing_(argument|mandatory_option_value)$/);
  });

  const groups = [...new Set(commands.map((c) => c.path.slice(0, -1).join(' ')))];
  it('the groups include one that also runs by itself', () => {
    expect(groups).toContain('serve');
  });
  it.each(groups.map((g) => [g === '' ? '(top level)' : g, g] as const))('a typo of a subcommand of lbot %s names the closest', async (_n, group) => {
    const subs = commands.filter((c) => c.path.slice(0, -1).join(' ') === group).map((c) => c.path.at(-1) ?? '');
    const target = subs.find((s) => s.length >= 4) ?? subs[0] ?? '';
    const typo = `${target.slice(0, -1)}${target.at(-1) === 'x' ? 'y' : 'x'}`;
    const e = await parseError([...(group === '' ? [] : group.split(' ')), typo]);
    expectUsage(e, group === '' ? [] : group.split(' '));
    expect(e.message).toBe(`unknown command '${typo}'`);
    expect(e.hint).toMatch(/^did you mean /);
  });

  it('a typo of a required flag is the typo, with the flag it resembles', async () => {
    const e = await parseError(['run', '--evnet', 'e.json']);
    expect(e.message).toBe("unknown option '--evnet'");
    expect(e.hint).toBe('did you mean --event? run `lbot run --help` for usage');
  });

  it('a command group without its subcommand is a usage error', async () => {
    const e = await parseError(['box']);
    expect(e.message).toBe('lbot box needs a subcommand');
  });

  it('--help and --version end the parse without an error', async () => {
    await expect(program().parseAsync(['runs', '--help'], { from: 'user' })).rejects.toBeInstanceOf(ParseEnded);
    await expect(program().parseAsync(['--version'], { from: 'user' })).rejects.toBeInstanceOf(ParseEnded);
  });
});
