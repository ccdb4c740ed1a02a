// Commands that must run on a config lbot cannot load (to repair or diagnose it) opt out of the eager
// config load every other command starts with (cli.ts preAction, AC-181).
import type { Command } from 'commander';

const tolerant = new WeakSet<Command>();

export function tolerateBrokenConfig(cmd: Command): Command {
  tolerant.add(cmd);
  return cmd;
}

export function toleratesBrokenConfig(cmd: Command): boolean {
  return tolerant.has(cmd);
}
