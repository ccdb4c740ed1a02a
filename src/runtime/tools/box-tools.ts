// The native tools' box port on the box service, and the per-run tool table hook the host calls.
import { renderSessionId, DEFAULT_SESSION_TEMPLATE, type SessionVariables } from '../../core/box/session-id.js';
import type { ToolProvider } from '../../core/host/ports.js';
import type { Binding } from '../../core/protocol/binding.js';
import type { JsonObject } from '../../core/protocol/event.js';
import { isRecord, tryParseJson } from '../../core/json.js';
import { ToolManager } from '../../core/tools/manager.js';
import { NativeToolSource, type BoxToolPort, type FileOp, type ToolSession } from '../../core/tools/native.js';
import type { MountSpec } from '../../core/box/model.js';
import { ToolError, WORKSPACE } from '../../core/tools/paths.js';
import type { ToolCallContext, ToolSource } from '../../core/tools/types.js';
import type { BoxService } from '../box/service.js';
import { FILEOPS_SCRIPT } from './fileops-script.js';

const STATUS_TTL_MS = 5000;
const FILEOP_TIMEOUT_SEC = 30;
/** Runs the helper with lbot's node: bound at /.lbot/node in sandboxes, the host's own on the host backend. */
const FILEOP_COMMAND = 'N=/.lbot/node; [ -x "$N" ] || N="$LBOT_HOST_NODE"; exec "$N" --input-type=module -e "$LBOT_FILEOP"';

export type ToolExecRequest = { command: string; workdir?: string; timeout_sec?: number; env?: Record<string, string> };

/** The box request of an `exec` tool call: the run's session (with its skill mounts) and the call's fields. */
export function toolExecInput(session: ToolSession, req: ToolExecRequest, ctx: Pick<ToolCallContext, 'run_id'>) {
  return {
    session_id: session.id,
    ...(session.extra_mounts?.length ? { extra_mounts: [...session.extra_mounts] } : {}),
    cmd: req.command,
    query_id: ctx.run_id,
    ...(req.workdir ? { workdir: req.workdir } : {}),
    ...(req.timeout_sec ? { timeout_sec: req.timeout_sec } : {}),
    ...(req.env ? { env: req.env } : {}),
  };
}

/** The box port of the native tools on a local box service. */
export class BoxToolPortImpl implements BoxToolPort {
  #status: { at: number; available: boolean } | null = null;

  constructor(readonly box: Pick<BoxService, 'status' | 'exec' | 'run'>) {}

  async available(): Promise<boolean> {
    const now = Date.now();
    if (this.#status && now - this.#status.at < STATUS_TTL_MS) return this.#status.available;
    const s = await this.box.status();
    this.#status = { at: now, available: s.available };
    return s.available;
  }

  async exec(session: ToolSession, req: ToolExecRequest, ctx: ToolCallContext): Promise<unknown> {
    const { result } = await this.box.exec(toolExecInput(session, req, ctx), { signal: ctx.signal });
    return result;
  }

  async fileOp(session: ToolSession, op: FileOp, ctx: ToolCallContext): Promise<JsonObject> {
    return refuseEscape(await this.fileOpAnswer(session, op, ctx));
  }

  /** The helper's answer as it is, an escape included (what a remote box sends back). */
  async fileOpAnswer(session: ToolSession, op: FileOp, ctx: ToolCallContext): Promise<JsonObject> {
    const { outcome } = await this.box.run(
      {
        session_id: session.id,
        ...(session.extra_mounts?.length ? { extra_mounts: [...session.extra_mounts] } : {}),
        cmd: FILEOP_COMMAND,
        timeout_sec: FILEOP_TIMEOUT_SEC,
        env: { LBOT_FILEOP: FILEOPS_SCRIPT, LBOT_HOST_NODE: process.execPath },
        query_id: ctx.run_id,
      },
      { internal: true, stdin: Buffer.from(JSON.stringify({ ...op, root: WORKSPACE })), signal: ctx.signal },
    );
    const lines = outcome.stdout.rawText().trim().split('\n');
    const parsed = tryParseJson(lines[lines.length - 1] ?? '');
    if (outcome.status !== 'completed' || !isRecord(parsed)) {
      const detail =
        outcome.stderr.rawText().trim() || outcome.stdout.rawText().trim() || `the file operation ${outcome.status === 'timed_out' ? 'timed out' : 'failed'}`;
      return { ok: false, error: detail.slice(0, 2000) };
    }
    return parsed;
  }
}

/** A path the helper found outside the workspace fails the tool call (the model sees the message). */
export function refuseEscape(answer: JsonObject): JsonObject {
  if (answer.escape === true) throw new ToolError(typeof answer.error === 'string' ? answer.error : 'Path is outside the workspace.');
  return answer;
}

/** The box session a run's tools use: the binding's `box-session-id-template`, default `{launcher_type}_{launcher_id}`. */
export function toolSessionId(binding: Pick<Binding, 'runner_config'>, runId: string, vars: SessionVariables = {}): string {
  const t = binding.runner_config['box-session-id-template'];
  return renderSessionId(typeof t === 'string' && t.trim() ? t : DEFAULT_SESSION_TEMPLATE, { query_id: runId, ...vars });
}

export type ToolsHookRequest = {
  binding: Binding;
  run_id: string;
  /** Conversation identity for the session template (launcher_type, launcher_id, sender_id, …). */
  vars?: SessionVariables;
  /** Read-only skill package mounts under /workspace/.skills/<name> for this run's visible skills. */
  skill_mounts?: readonly MountSpec[];
};

/**
 * The `tools` hook of the host: a tool table per run with the native tools (when a box backend is
 * usable) plus whatever other sources (skills, MCP, plugins) `extraSources` returns.
 */
export function createToolsHook(opts: {
  /** The box behind the native tools: a local box service or a remote box's port. */
  port: BoxToolPort;
  warn?: (message: string) => void;
  extraSources?: (req: ToolsHookRequest) => ToolSource[] | Promise<ToolSource[]>;
}): (req: ToolsHookRequest) => Promise<ToolProvider> {
  const port = opts.port;
  const manager = new ToolManager(opts.warn);
  return async (req) => {
    const native = new NativeToolSource(port, {
      id: toolSessionId(req.binding, req.run_id, req.vars),
      ...(req.skill_mounts ? { extra_mounts: req.skill_mounts } : {}),
    });
    const extra = opts.extraSources ? await opts.extraSources(req) : [];
    return manager.forRun([native, ...extra], req.binding.resource_policy);
  };
}
