// What the conformance driver observed of a runner plugin: its files, its handshake, each probe run
// and its shutdown. The checks (checks.ts) judge this evidence and nothing else.
import type { Capabilities } from '../protocol/manifest.js';
import type { ApiCallAudit } from '../stores/types.js';
import type { AgentProbeName } from './agent-plan.js';

export type PluginFiles = {
  dir: string;
  /** Why the plugin was skipped (no manifest, bad YAML, schema errors), or null. */
  manifestError: string | null;
  /** One line per skipped or incompatible runner component. */
  componentWarnings: string[];
  /** A LangBot plugin's declarations lbot does not have, set aside by discovery (not failures). */
  setAside: string[];
  identity: string | null;
  runners: Array<{ id: string; runner_name: string; capabilities: Capabilities }>;
};

export type Handshake = { ok: true; ms: number } | { ok: false; code: string; message: string };

export const PROBES = ['message', 'message_no_stream', 'join', 'friend', 'cancel', 'deadline'] as const;
export type ProbeName = (typeof PROBES)[number];

/** A run/result as the runner sent it, in arrival order. */
export type RawResult = { type: string | null; raw: unknown };

export type ProbeRun = {
  probe: ProbeName;
  runner_id: string;
  run_id: string | null;
  /** The host's verdict on the run. */
  status: string;
  error: { code: string; message: string } | null;
  results: RawResult[];
  /** The plugin's answer to `run`, if it answered. */
  reply: string | null;
  /** Milliseconds from the host's run/cancel to the plugin's answer (null: no cancel, or no answer). */
  cancelToReplyMs: number | null;
  cancelSent: boolean;
  /** The host killed the process group because the runner did not stop. */
  killed: boolean;
  /** The connection failure that ended the run (corrupted channel or crash), if any. */
  channel: { code: string; message: string } | null;
  api: ApiCallAudit[];
  warnings: string[];
  /** Deadline given to the probe, seconds. */
  deadlineS: number;
};

/** One agent probe run: the run as for any probe, plus what the fake model and the probe tools saw. */
export type AgentProbeRun = Omit<ProbeRun, 'probe'> & {
  probe: AgentProbeName;
  /** Bodies of the chat requests the fake model server received in this run, in order. */
  modelRequests: unknown[];
  /** Tool calls that reached the probe host's tool table, in order. */
  toolCalls: Array<{ name: string; parameters: Record<string, unknown> }>;
  /** The nonce the lookup tool answered with in this run. */
  nonce: string;
  /** The cap set through the runner's `max-tool-iterations`, or null when the runner declares no such key. */
  cap: number | null;
};

/** The agent checks' evidence (`--agent`): which runners they applied to, and their runs. */
export type AgentEvidence = {
  /** Runners the checks could not be held to, and why (no model or tool permission). */
  unfit: Array<{ runner_id: string; reason: string }>;
  runs: AgentProbeRun[];
  /** Why the agent probes could not run (a run could not be started), or null. */
  blocked: string | null;
};

export type ShutdownEvidence = { exitedBySelf: boolean; ms: number; code: number | null; signal: string | null };

export type Evidence = {
  files: PluginFiles;
  handshake: Handshake | null;
  /** Why probes could not run (invalid config, start failure), or null. */
  probesBlocked: string | null;
  runs: ProbeRun[];
  shutdown: ShutdownEvidence | null;
  /** The host's cancel grace period, ms. */
  graceMs: number;
  /** run/result notifications the host dropped because they named no run it had given (foreign run_id). */
  strayResults?: string[];
  /** Processes the plugin started that were still running after it exited (null: not observable). */
  leftovers?: Array<{ pid: number; command: string }> | null;
  /** The agent probes' evidence; absent when the agent checks were not asked for. */
  agent?: AgentEvidence;
};
