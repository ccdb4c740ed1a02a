// The box service's request, option and view types.
import type { Writable } from 'node:stream';
import type { BoxConfig } from '../../core/config.js';
import type { SpecRequest } from '../../core/box/spec.js';
import type { BackendName, BoxSpec, SessionInfo, ToolResult } from '../../core/box/model.js';
import type { RunOutcome } from './run-process.js';
import type { BackendSet } from './select.js';

/** A request as the CLI or a tool sends it; unset fields come from config and the profile. */
export type ExecInput = SpecRequest & {
  session_id?: string | null;
  cmd: string;
  profile?: string | null;
  query_id?: string | null;
};

export type ExecOptions = {
  sinks?: { stdout?: Writable; stderr?: Writable };
  signal?: AbortSignal;
  stdin?: Buffer;
  /** lbot's own helpers: no address-space rlimit, big capture, no error record. */
  internal?: boolean;
};

export type ExecOutput = { result: ToolResult; effective_spec: BoxSpec };
export type RawExecOutput = { outcome: RunOutcome; spec: BoxSpec; backend: BackendName };

export type SessionView = SessionInfo & { backend: BackendName; alive: boolean; managed_processes: number; one_shot: boolean };

export type BoxServiceOptions = {
  dataDir: string;
  config: BoxConfig;
  /** Who owns sessions created through this service: a one-shot CLI (default) or a `serve` process. */
  owner?: 'cli' | 'serve';
  /** Per-command `--backend`. */
  backend?: BackendName | null;
  warn?: (message: string) => void;
  /** Test seam: replace backends. */
  backends?: Partial<BackendSet>;
};
