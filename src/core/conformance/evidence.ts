// What the conformance driver observed of a runner plugin: its files, its handshake, each probe run
// and its shutdown. The checks (checks.ts) judge this evidence and nothing else.
import type { Capabilities } from '../protocol/manifest.js';
import type { ApiCallAudit } from '../stores/types.js';

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
};
