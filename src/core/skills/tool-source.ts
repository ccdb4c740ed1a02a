// The skills side of a run's tool table: per-run skill state, the `activate` tool as a tool source,
// and the skills rule the native tools apply before they run (skills-mcp-tools.md §1.13, §2.1.1, §4.1).
import path from 'node:path';
import type { Binding } from '../protocol/binding.js';
import type { JsonObject } from '../protocol/event.js';
import type { ToolCallContext, ToolDefinition, ToolSource } from '../tools/types.js';
import { LbotError } from '../errors.js';
import {
  ACTIVATE_TOOL_NAME,
  activateSkill,
  activateToolDescriptor,
  checkExecSkills,
  checkSkillPath,
  createActivationState,
  skillMountPlan,
  type ActivationState,
  type SkillMount,
} from './activation.js';
import { boundSkills, skillResources, type SkillCatalogEntry } from './index.js';

/** What one run knows about skills; build it once per run, before the tool table. */
export type RunSkills = {
  /** Bound, installed skills, sorted by name. */
  visible: SkillCatalogEntry[];
  /** Bound names that are not installed. */
  missing: string[];
  /** `_activated_skills` of this run. */
  state: ActivationState;
  /** `extra_mounts` for the run's box session: each visible skill read-only at /workspace/.skills/<name>. */
  mounts: SkillMount[];
  /** One line per skipped mount or unknown bound name (for the run trace / stderr). */
  warnings: string[];
  /** `resources.skills` for the run context. */
  resources: Array<{ skill_name: string; description: string }>;
};

/** Computes a run's skills from its binding and the installed catalog (`loadSkillCatalog`). */
export function prepareRunSkills(
  binding: Pick<Binding, 'skills'>,
  catalog: readonly SkillCatalogEntry[],
  isDirectory: (hostPath: string) => boolean,
): RunSkills {
  const { visible, missing } = boundSkills(binding, catalog);
  const plan = skillMountPlan(visible, isDirectory);
  return {
    visible,
    missing,
    state: createActivationState(),
    mounts: plan.mounts,
    warnings: [...missing.map((n) => `skill ${n} is bound but not installed; run \`lbot skill install\``), ...plan.warnings],
    resources: skillResources(visible),
  };
}

/**
 * The `activate` tool of one run. It is offered only when the box is usable and at least one skill is
 * bound (skills-mcp-tools.md §1.16); it activates only bound skills.
 */
export class SkillToolSource implements ToolSource {
  readonly kind = 'skill';
  readonly owner = 'skill';

  constructor(
    private readonly run: RunSkills,
    private readonly boxAvailable: () => Promise<boolean>,
  ) {}

  async list(): Promise<ToolDefinition[]> {
    if (this.run.visible.length === 0 || !(await this.boxAvailable())) return [];
    const d = activateToolDescriptor(this.run.visible);
    return [{ name: d.name, description: d.description, human_desc: d.human_desc, parameters: { ...d.parameters } }];
  }

  async call(name: string, params: JsonObject, _ctx: ToolCallContext): Promise<unknown> {
    if (name !== ACTIVATE_TOOL_NAME) throw new LbotError('not_found', `Tool not found: ${name}`, { details: { tool_name: name } });
    return activateSkill(this.run.state, this.run.visible, params);
  }
}

const FILE_TOOLS: Record<string, 'read' | 'write'> = { read: 'read', glob: 'read', grep: 'read', write: 'write', edit: 'write' };

/**
 * The skills rule for a native tool call, applied before it runs: `exec` may reference (command or
 * workdir) one activated skill; `write`/`edit` need the skill activated; `read`/`glob`/`grep` need it
 * bound. Throws a `runtime_error` whose message tells the model what to do; other tools pass.
 */
export function guardNativeCall(run: RunSkills, tool: string, params: JsonObject): void {
  if (tool === 'exec') {
    const command = typeof params.command === 'string' ? params.command : '';
    const workdir = typeof params.workdir === 'string' ? params.workdir : undefined;
    checkExecSkills(run.state, run.visible, { command, workdir });
    return;
  }
  const access = FILE_TOOLS[tool];
  if (access === undefined) return;
  const target = typeof params.path === 'string' ? params.path.trim() : '';
  checkSkillPath(run.state, run.visible, path.posix.normalize(target.startsWith('/') ? target : `/workspace/${target}`), access);
}
