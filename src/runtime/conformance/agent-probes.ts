// The rig of the agent checks (`lbot runner test --agent`): one in-process fake model server per runner and
// probe, the probe tools the host offers, and the agent probe runs themselves.
import { randomBytes } from 'node:crypto';
import { ModelConfigSchema, type ModelConfig } from '../../core/config.js';
import {
  AGENT_PROBES,
  agentProbeSteps,
  ITERATIONS_KEY,
  LOOKUP_TOOL,
  PROBE_TOOL_ITERATIONS,
  UNGRANTED_TOOL,
  type AgentProbeName,
} from '../../core/conformance/agent-plan.js';
import type { AgentEvidence, AgentProbeRun } from '../../core/conformance/evidence.js';
import type { ToolsRequest } from '../../core/host/host-types.js';
import type { ToolDescriptor, ToolProvider } from '../../core/host/ports.js';
import { itemType } from '../../core/host/runner-config.js';
import { BindingSchema } from '../../core/protocol/binding.js';
import type { RunnerDescriptor } from '../../core/protocol/manifest.js';
import { FakeScriptSchema } from '../models/fake-server-script.js';
import { startFakeModelServer, type FakeServer } from '../models/fake-server.js';
import { driveRun, type ProbeContext } from './drive.js';
import { agentProbeEvent } from './probes.js';

const CHAT_PATHS = new Set(['/v1/chat/completions', '/v1/messages']);
/** The upstream model name the probe models use: one whose tokenizer the host knows. */
const UPSTREAM_MODEL = 'gpt-4o-mini';

const TOOLS: ToolDescriptor[] = [
  {
    name: LOOKUP_TOOL,
    tool_type: 'conformance',
    description: 'Looks up the value stored under a key.',
    parameters: { type: 'object', properties: { key: { type: 'string', description: 'the key to look up' } }, required: ['key'] },
  },
  {
    name: UNGRANTED_TOOL,
    tool_type: 'conformance',
    description: 'A tool the conformance runs are never granted.',
    parameters: { type: 'object', properties: {} },
  },
];

/** Why a runner cannot be held to the agent checks, or null when it can. */
export function agentUnfitness(r: RunnerDescriptor): string | null {
  const models = r.permissions.models.filter((op) => op === 'invoke' || op === 'stream');
  const missing = [...(models.length === 0 ? ['models: [invoke] or [stream]'] : []), ...(r.permissions.tools.includes('call') ? [] : ['tools: [call]'])];
  return missing.length ? `declares no ${missing.join(' and no ')} permission, so it cannot run a model with tools (the agent checks need both)` : null;
}

type Slot = { runner: RunnerDescriptor; probe: AgentProbeName; model_id: string; server: FakeServer };

export type AgentRig = {
  /** The probe models, one per runner and probe, for the host's model provider. */
  readonly models: ModelConfig[];
  /** The host's tool table for every run: the probe tools. */
  tools(req: ToolsRequest): Promise<ToolProvider>;
  /** Runs every agent probe against every fit runner. */
  run(p: ProbeContext, log: (line: string) => void): Promise<AgentEvidence>;
  close(): Promise<void>;
};

/** Starts the fake model servers for `runners` (the unfit ones get none). */
export async function startAgentRig(runners: readonly RunnerDescriptor[]): Promise<AgentRig> {
  const nonce = `conformance-${randomBytes(6).toString('hex')}`;
  const api_key = `sk-conformance-${randomBytes(12).toString('hex')}`;
  const calls = new Map<string, Array<{ name: string; parameters: Record<string, unknown> }>>();
  const fit = runners.filter((r) => agentUnfitness(r) === null);
  const slots: Slot[] = [];
  try {
    for (const [i, runner] of fit.entries())
      for (const probe of AGENT_PROBES) {
        const server = await startFakeModelServer(FakeScriptSchema.parse({ api_key, steps: agentProbeSteps(probe) }));
        slots.push({ runner, probe, model_id: `conformance-${i + 1}-${probe.replace(/_/g, '-')}`, server });
      }
  } catch (err) {
    await Promise.all(slots.map((s) => s.server.close()));
    throw err;
  }
  const models = slots.map((s) =>
    ModelConfigSchema.parse({ id: s.model_id, provider: 'openai', base_url: s.server.openaiBaseUrl, model: UPSTREAM_MODEL, api_key, max_retries: 0 }),
  );
  const provider: ToolProvider = {
    list: () => Promise.resolve(TOOLS),
    has: (name) => TOOLS.some((t) => t.name === name),
    call: (name, parameters, ctx) => {
      const log = calls.get(ctx.run_id) ?? [];
      log.push({ name, parameters });
      calls.set(ctx.run_id, log);
      return Promise.resolve({ key: typeof parameters.key === 'string' ? parameters.key : null, value: nonce });
    },
  };
  const runOne = async (p: ProbeContext, slot: Slot): Promise<AgentProbeRun> => {
    const { config, cap } = probeConfig(slot.runner, p, slot.model_id);
    const deadlineS = typeof config.timeout === 'number' ? config.timeout : p.probeTimeoutS;
    const binding = BindingSchema.parse({
      binding_id: `conformance-agent:${slot.runner.id}`,
      scope: { scope_type: 'global', scope_id: null },
      event_types: ['*'],
      runner_id: slot.runner.id,
      runner_config: config,
      resource_policy: { allowed_model_uuids: [slot.model_id], allowed_tool_names: [LOOKUP_TOOL] },
    });
    const run = await driveRun(p, { event: agentProbeEvent(slot.probe, p.maxDataBytes), binding, deadlineS });
    return {
      ...run,
      probe: slot.probe,
      modelRequests: slot.server.requests.filter((q) => CHAT_PATHS.has(q.path)).map((q) => q.body),
      toolCalls: run.run_id ? (calls.get(run.run_id) ?? []) : [],
      nonce,
      cap,
    };
  };
  return {
    models,
    tools: () => Promise.resolve(provider),
    async run(p, log) {
      const evidence: AgentEvidence = { unfit: [], runs: [], blocked: null };
      for (const r of runners) {
        const why = agentUnfitness(r);
        if (why) evidence.unfit.push({ runner_id: r.id, reason: why });
      }
      for (const slot of slots) {
        log(`probe ${slot.probe} → ${slot.runner.id}`);
        evidence.runs.push(await runOne(p, slot));
      }
      return evidence;
    },
    close: async () => {
      await Promise.all(slots.map((s) => s.server.close()));
    },
  };
}

/** The runner config of an agent probe: the suite's, with every model selector pointing at the probe model and a small cap. */
function probeConfig(runner: RunnerDescriptor, p: ProbeContext, model_id: string): { config: Record<string, unknown>; cap: number | null } {
  const config: Record<string, unknown> = { timeout: p.probeTimeoutS, ...p.runnerConfig };
  let cap: number | null = null;
  for (const item of runner.config_schema) {
    const type = itemType(item);
    if (type === 'model-fallback-selector') config[item.name] = { primary: model_id, fallbacks: [] };
    else if (type === 'llm-model-selector') config[item.name] = model_id;
    else if (item.name === ITERATIONS_KEY) {
      config[item.name] = PROBE_TOOL_ITERATIONS;
      cap = PROBE_TOOL_ITERATIONS;
    }
  }
  return { config, cap };
}
