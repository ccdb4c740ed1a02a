// Commander's parse failures as lbot's own usage error (`error[usage]`, exit 2, the --json envelope), with a
// hint naming the closest command or flag and the help to read.
import type { Command, CommanderError } from 'commander';
import { closestName } from '../../core/closest-name.js';
import { LbotError } from '../../core/errors.js';

/** The full name of a command as typed: `lbot runs list`. */
function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Long flags `cmd` accepts, its ancestors' included (global flags are typed anywhere). */
function knownLongFlags(cmd: Command): string[] {
  const flags: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) for (const o of c.options) if (o.long) flags.push(o.long);
  return flags;
}

/** The first option-looking word commander left unconsumed, before any `--`; null when there is none. */
function firstUnknownOption(cmd: Command): string | null {
  for (const arg of cmd.args) {
    if (arg === '--') return null;
    if (arg.startsWith('-') && arg !== '-') return arg.split('=')[0] ?? arg;
  }
  return null;
}

function suggestFlag(flag: string, cmd: Command): string | null {
  if (!flag.startsWith('--')) return null;
  return closestName(flag, knownLongFlags(cmd));
}

/** True when `cmd` takes a command line of its own (`box exec -- CMD…`), whose options need a `--` before them. */
function takesCommandLine(cmd: Command): boolean {
  return cmd.registeredArguments.some((a) => a.variadic);
}

export function usageError(err: CommanderError, cmd: Command): LbotError {
  const lines = err.message.split('\n');
  let message = (lines[0] ?? err.message).replace(/^error: /, '');
  let suggestion = /\(Did you mean (.+)\?\)/.exec(err.message)?.[1] ?? null;
  let reason = err.code.replace(/^commander\./, '');
  let flag: string | null = null;
  if (err.code === 'commander.unknownOption') flag = /'([^']+)'/.exec(message)?.[1] ?? null;
  // Commander checks required options before unknown ones, so a typo of a required flag (`--evnet`) would
  // read as "required option '--event' not specified": name the typo instead.
  if (err.code === 'commander.missingMandatoryOptionValue') {
    const unknown = firstUnknownOption(cmd);
    if (unknown !== null) {
      flag = unknown;
      reason = 'unknownOption';
      message = `unknown option '${unknown}'`;
      suggestion = suggestFlag(unknown, cmd);
    }
  }
  // A command that runs on its own and has subcommands (`serve`, `serve token`) reads a mistyped
  // subcommand as an argument it does not take: name it as the unknown command it is.
  const word = cmd.args[0];
  if (err.code === 'commander.excessArguments' && cmd.commands.length > 0 && word !== undefined) {
    reason = 'unknownCommand';
    message = `unknown command '${word}'`;
    suggestion = closestName(
      word,
      cmd.commands.map((c) => c.name()),
    );
  }
  const help = `run \`${commandPath(cmd)} --help\` for usage`;
  let hint = suggestion ? `did you mean ${suggestion}? ${help}` : help;
  if (flag !== null && suggestion === null && takesCommandLine(cmd)) {
    hint = `put \`--\` before the command, so its options are its own: ${commandPath(cmd)} [options] -- ${cmd.args.join(' ')}`;
  }
  if (err.code === 'commander.help') message = `${commandPath(cmd)} needs a subcommand`;
  return new LbotError('usage', message, { hint, details: { reason: reason.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) } });
}
