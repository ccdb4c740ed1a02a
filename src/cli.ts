// Builds the commander program from src/commands/* and runs it; the only place exit codes are set.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Command, type CommanderError } from 'commander';
import { LbotError } from './core/errors.js';
import { EXIT } from './commands/shared/exit-codes.js';
import { createOutput, isClosedPipe } from './commands/shared/output.js';
import { resolveGlobalFlags, type CliContext } from './commands/shared/context.js';
import { createInterrupt } from './commands/shared/interrupt.js';
import { usageError } from './commands/shared/usage-error.js';
import { toleratesBrokenConfig } from './commands/shared/broken-config.js';
import { LBOT_VERSION } from './package-root.js';
import { loadCommandsFor, type Register } from './commands/index.js';
import type { ConfigFile } from './core/stores/config-file.js';

/**
 * The command tree of the given registrations (commands/index.ts loads them: all, or the ones a command line
 * needs), its parse failures made lbot's usage errors (exported for the contract tests).
 */
export function createProgram(getCtx: () => CliContext, commands: readonly Register[]): Command {
  const program = new Command('lbot')
    .description('lbot: an agent host and developer toolchain for event-driven AI agent runners')
    .version(LBOT_VERSION, '-V, --version', 'print the lbot version')
    .option('--data-dir <dir>', 'data directory (env LBOT_HOME, default ./.lbot)')
    .option('--store <url>', 'run stores: a postgres:// URL (env LBOT_DATABASE_URL; default: SQLite in the data dir)')
    .option('--plugins <dir>', 'runner plugins directory (default <data-dir>/plugins)')
    .option('--json', 'machine-readable JSON on stdout: an object, an array for lists, NDJSON for streams')
    .option('--jsonl', 'like --json, but list commands print one JSON object a line (NDJSON)')
    .option('--verbose', 'more detail (observed notices, info lines)')
    .option('--debug', 'print stacks for internal errors')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: true })
    .exitOverride();
  for (const register of commands) register(program, getCtx);
  overrideExits(program);
  return program;
}

/** Help and --version end the parse with this (exit 0); every other parse failure is a usage error. */
export class ParseEnded extends Error {}

/**
 * Makes every command's parse failures lbot's usage error, reported by the one reporter; commander prints
 * nothing of its own but help (and the help a command group shows when its subcommand is missing).
 */
function overrideExits(cmd: Command): void {
  cmd.exitOverride((err: CommanderError) => {
    if (err.exitCode === 0) throw new ParseEnded(err.code);
    throw usageError(err, cmd);
  });
  cmd.configureOutput({ outputError: () => undefined });
  for (const sub of cmd.commands) overrideExits(sub);
}

export async function main(argv: string[]): Promise<void> {
  // A reader that closes early (`lbot … | head`) ends the output quietly instead of crashing on EPIPE.
  process.stdout.on('error', (err) => {
    if (!isClosedPipe(err)) throw err;
  });
  let ctx: CliContext | undefined;
  // Only the modules of the command named are imported: start-up is most of a light command's time.
  const commands = await loadCommandsFor(argv.slice(2));
  const interrupt = createInterrupt();
  const fallbackOutput = createOutput({ json: argv.includes('--json') || argv.includes('--jsonl'), verbose: false, debug: argv.includes('--debug') });
  const program = createProgram(() => {
    if (!ctx) throw new Error('context used before preAction');
    return ctx;
  }, commands);
  program.hook('preAction', async (_this, action) => {
    const flags = resolveGlobalFlags(action.optsWithGlobals());
    // The config schema is zod and most of core: help and --version never load it.
    const { openConfigFile } = await import('./core/stores/config-file.js');
    let configFile: ConfigFile | undefined;
    ctx = {
      flags,
      output: createOutput(flags),
      configFile: () => (configFile ??= openConfigFile(flags.dataDir)),
      get signal() {
        return interrupt.signal;
      },
      exitCode: EXIT.ok,
    };
    // Every command loads the config first, so a broken file fails the same way everywhere (AC-181);
    // the ones that repair or diagnose it do not.
    if (toleratesBrokenConfig(action)) return;
    const config = ctx.configFile().config;
    // Idle box sessions are reaped on every lbot start; nothing to load when the data dir has none.
    if (existsSync(path.join(flags.dataDir, 'box', 'sessions'))) {
      const { reapBoxSessions } = await import('./runtime/box/service.js');
      await reapBoxSessions(flags.dataDir, config.box, (m) => ctx?.output.warn(m));
    }
  });
  try {
    await program.parseAsync(argv);
    process.exitCode = ctx?.exitCode ?? EXIT.ok;
  } catch (err) {
    if (err instanceof ParseEnded) {
      process.exitCode = EXIT.ok;
      return;
    }
    process.exitCode = (ctx?.output ?? fallbackOutput).error(err);
  } finally {
    interrupt.dispose();
    // Large results to a slow pipe are still queued here; nothing may end the process before they are out.
    await (ctx?.output ?? fallbackOutput).flush();
  }
}

export { LbotError };
