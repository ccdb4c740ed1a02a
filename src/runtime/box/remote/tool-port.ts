// The native tools' box port on a remote box: exec and file operations go to `lbot box serve` over its API.
import type { JsonObject } from '../../../core/protocol/event.js';
import type { BoxToolPort, FileOp, ToolSession } from '../../../core/tools/native.js';
import type { ToolCallContext } from '../../../core/tools/types.js';
import { refuseEscape, toolExecInput, type ToolExecRequest } from '../../tools/box-tools.js';
import type { RemoteBoxClient } from './client.js';

const STATUS_TTL_MS = 5000;

export class RemoteBoxToolPort implements BoxToolPort {
  #status: { at: number; available: boolean } | null = null;
  #lastProblem = '';

  constructor(
    readonly client: RemoteBoxClient,
    readonly warn: (message: string) => void = () => undefined,
  ) {}

  /** Whether the remote box can run commands; an unreachable server offers no tools (and says why once). */
  async available(): Promise<boolean> {
    const now = Date.now();
    if (this.#status && now - this.#status.at < STATUS_TTL_MS) return this.#status.available;
    let available = false;
    let problem = '';
    try {
      const s = await this.client.status();
      available = s.available;
      if (!available) problem = `the remote box at ${this.client.url} has no usable backend${s.connector_error ? `: ${s.connector_error}` : ''}`;
    } catch (err) {
      problem = err instanceof Error ? err.message : String(err);
    }
    if (problem && problem !== this.#lastProblem) this.warn(`native box tools are off for now: ${problem}`);
    this.#lastProblem = problem;
    this.#status = { at: now, available };
    return available;
  }

  async exec(session: ToolSession, req: ToolExecRequest, ctx: ToolCallContext): Promise<unknown> {
    const answer = await this.client.exec(toolExecInput(session, req, ctx), ctx.signal);
    // The tool answers what a local exec tool answers: the result without the spec it ran under.
    return Object.fromEntries(Object.entries(answer).filter(([k]) => k !== 'effective_spec'));
  }

  async fileOp(session: ToolSession, op: FileOp, ctx: ToolCallContext): Promise<JsonObject> {
    const answer = await this.client.fileOp(
      { session: { id: session.id, ...(session.extra_mounts?.length ? { extra_mounts: [...session.extra_mounts] } : {}) }, op, query_id: ctx.run_id },
      ctx.signal,
    );
    return refuseEscape(answer);
  }
}
