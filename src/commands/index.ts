// Registers every command group; the list below is the whole CLI surface.
import type { Command } from 'commander';
import type { GetContext } from './shared/context.js';
import { registerConfig } from './config.js';
import { registerRun } from './run.js';
import { registerServe } from './serve.js';
import { registerDev } from './dev.js';
import { registerInspect } from './inspect.js';
import { registerState } from './state.js';
import { registerRunner } from './runner.js';
import { registerRunnerDev } from './runner-dev.js';
import { registerBinding } from './binding.js';
import { registerSkill } from './skill.js';
import { registerBox } from './box.js';
import { registerDoctor } from './doctor.js';
import { registerMcp } from './mcp.js';
import { registerModel } from './model.js';
import { registerPlatform } from './platform.js';
import { registerOutbox } from './outbox.js';
import { registerSchedule } from './schedule.js';
import { registerKb } from './kb.js';
import { registerSchema } from './schema.js';

export function registerCommands(program: Command, ctx: GetContext): void {
  registerConfig(program, ctx);
  registerRun(program, ctx);
  registerServe(program, ctx);
  registerDev(program, ctx);
  registerInspect(program, ctx);
  registerState(program, ctx);
  registerRunnerDev(registerRunner(program, ctx), ctx);
  registerBinding(program, ctx);
  registerSkill(program, ctx);
  registerBox(program, ctx);
  registerDoctor(program, ctx);
  registerMcp(program, ctx);
  registerModel(program, ctx);
  registerPlatform(program, ctx);
  registerOutbox(program, ctx);
  registerSchedule(program, ctx);
  registerKb(program, ctx);
  registerSchema(program, ctx);
}
