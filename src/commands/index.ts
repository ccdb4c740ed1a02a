// Registers every command group; the list below is the whole CLI surface.
import type { Command } from 'commander';
import type { CliContext } from './shared/context.js';
import { registerConfig } from './config.js';
import { registerRun } from './run.js';

export type GetContext = () => CliContext;

export function registerCommands(program: Command, ctx: GetContext): void {
  registerConfig(program, ctx);
  registerRun(program, ctx);
}
