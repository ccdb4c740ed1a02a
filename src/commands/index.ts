// The whole CLI surface: every command module and the top-level commands it registers. A module is imported
// only when the command line names one of its commands, so `lbot config get` does not load serve, box or MCP
// code; a command line naming none of them (root help, a typo) loads every module, so help and usage errors
// see the whole tree.
import type { Command } from 'commander';
import type { GetContext } from './shared/context.js';

export type Register = (program: Command, getCtx: GetContext) => void;

type CommandModule = { readonly commands: readonly string[]; readonly load: () => Promise<Register> };

/** In registration order (usage-error suggestions weigh commands in this order). */
const MODULES: readonly CommandModule[] = [
  { commands: ['config'], load: async () => (await import('./config.js')).registerConfig },
  { commands: ['run'], load: async () => (await import('./run.js')).registerRun },
  { commands: ['serve'], load: async () => (await import('./serve.js')).registerServe },
  { commands: ['worker'], load: async () => (await import('./worker.js')).registerWorker },
  { commands: ['dev'], load: async () => (await import('./dev.js')).registerDev },
  {
    commands: ['runs', 'conversations', 'events', 'transcript', 'artifacts'],
    load: async () => (await import('./inspect.js')).registerInspect,
  },
  { commands: ['state'], load: async () => (await import('./state.js')).registerState },
  {
    commands: ['runner'],
    load: async () => {
      const [{ registerRunner }, { registerRunnerDev }] = await Promise.all([import('./runner.js'), import('./runner-dev.js')]);
      return (program, getCtx) => registerRunnerDev(registerRunner(program, getCtx), getCtx);
    },
  },
  { commands: ['binding'], load: async () => (await import('./binding.js')).registerBinding },
  { commands: ['skill'], load: async () => (await import('./skill.js')).registerSkill },
  { commands: ['box'], load: async () => (await import('./box.js')).registerBox },
  { commands: ['doctor'], load: async () => (await import('./doctor.js')).registerDoctor },
  { commands: ['mcp'], load: async () => (await import('./mcp.js')).registerMcp },
  { commands: ['model'], load: async () => (await import('./model.js')).registerModel },
  { commands: ['platform'], load: async () => (await import('./platform.js')).registerPlatform },
  { commands: ['outbox'], load: async () => (await import('./outbox.js')).registerOutbox },
  { commands: ['schedule'], load: async () => (await import('./schedule.js')).registerSchedule },
  { commands: ['kb'], load: async () => (await import('./kb.js')).registerKb },
  { commands: ['schema'], load: async () => (await import('./schema.js')).registerSchema },
  { commands: ['db'], load: async () => (await import('./db.js')).registerDb },
];

/** Every top-level command name, without importing any module. */
export const COMMAND_NAMES: readonly string[] = MODULES.flatMap((m) => m.commands);

/** Every module's registration, in order: the whole tree (root help, typos, the contract tests). */
export function loadAllCommands(): Promise<Register[]> {
  return Promise.all(MODULES.map((m) => m.load()));
}

/** Root options that take a value: the word after them is not the command's name. */
const ROOT_VALUE_OPTIONS = new Set(['--data-dir', '--store', '--plugins']);
// Help and version flags are not here: before the command they answer for the root, which needs the whole tree.
const ROOT_FLAGS = new Set(['--json', '--jsonl', '--verbose', '--debug']);

/** What a command line asks of the root: a command we know by name, the version, or anything else. */
export type CommandLine = { kind: 'command'; name: string } | { kind: 'version' } | { kind: 'other' };

/**
 * Reads a command line (process.argv without node and the script) as commander does, as far as choosing
 * what to load: root options may come before the command, `help NAME` names NAME, and `--version` before any
 * command answers at once. Anything else first (help, `--`, an unknown flag, a typo) is `other`.
 */
export function readCommandLine(args: readonly string[]): CommandLine {
  let help = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    const flag = arg.startsWith('--') && arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg;
    if (ROOT_VALUE_OPTIONS.has(arg)) i++;
    else if (ROOT_VALUE_OPTIONS.has(flag) || ROOT_FLAGS.has(arg)) continue;
    else if ((arg === '--version' || arg === '-V') && !help) return { kind: 'version' };
    else if (arg.startsWith('-')) return { kind: 'other' };
    else if (arg === 'help' && !help) help = true;
    else return COMMAND_NAMES.includes(arg) ? { kind: 'command', name: arg } : { kind: 'other' };
  }
  return { kind: 'other' };
}

/**
 * The registrations a command line needs: the module of the command it names, none for the version (commander
 * answers it before looking for a command), else the whole tree.
 */
export async function loadCommandsFor(args: readonly string[]): Promise<Register[]> {
  const line = readCommandLine(args);
  if (line.kind === 'version') return [];
  const found = line.kind === 'command' ? MODULES.find((m) => m.commands.includes(line.name)) : undefined;
  return found ? [await found.load()] : loadAllCommands();
}
