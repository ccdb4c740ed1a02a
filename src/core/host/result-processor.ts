// Per-run processing of the result stream in arrival order: artifacts, state, transcript, delivery,
// observed notices and the terminal result (runner-protocol.md §5.2, §5.4–§5.7). Each result is checked
// when it arrives; what it writes and delivers runs on one serial chain, so records keep arrival order.
import { randomUUID } from 'node:crypto';
import type { Binding } from '../protocol/binding.js';
import { StateScopeSchema } from '../protocol/binding.js';
import type { Message, MessageChunk } from '../protocol/context.js';
import type { EventEnvelope, JsonObject } from '../protocol/event.js';
import { ActionRequestedDataSchema, ArtifactCreatedDataSchema, MAX_ARTIFACT_INLINE_BYTES, StateUpdatedDataSchema } from '../protocol/results.js';
import type { AsyncStores } from '../stores/async.js';
import type { ObservedNotice } from '../stores/types.js';
import { LbotError } from '../errors.js';
import { isRecord } from '../json.js';
import { ApiError } from './api-error.js';
import { serializeStateValue, stateScopeKey } from './api/state.js';
import { decodeBase64Strict } from './attachments.js';
import { eventColumns } from './event-record.js';
import { messageText, normalizeResult, parseResultEnvelope, protocolError } from './result-normalizer.js';
import { firstIssue } from '../zod-issue.js';
import type { RunSession } from './session.js';
import { aliasStateKey } from './state-scope.js';
import type { ErrorValue } from '../protocol/error-value.js';

/** What the delivery layer receives (stdout, HTTP stream). */
export type Delivered = { type: 'message.delta'; run_id: string; chunk: MessageChunk } | { type: 'message.completed'; run_id: string; message: Message };

export type Terminal = { status: 'completed' } | { status: 'failed'; error: ErrorValue };

export type ProcessorDeps = {
  session: RunSession;
  event: EventEnvelope;
  binding: Binding;
  stores: AsyncStores;
  streaming: boolean;
  nowS(): number;
  stateValueBytes: number;
  /** Awaited before the next result's writes: the run's record of what it delivered keeps its order. */
  deliver(item: Delivered): void | Promise<void>;
  observe(notice: ObservedNotice): void | Promise<void>;
  warn(message: string): void;
};

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class ResultProcessor {
  #pendingRefs: JsonObject[] = [];
  /** The writes and deliveries of the results handled so far, in order; it never rejects. */
  #chain: Promise<void> = Promise.resolve();
  #writeError: { err: unknown } | null = null;
  /** Ops appended and not yet finished. */
  #queued = 0;
  #onWriteError: ((err: unknown) => void) | null = null;
  #terminal: Terminal | null = null;
  #produced = 0;
  #lastDelta: string | null = null;
  #finalText: string | null = null;

  constructor(private readonly d: ProcessorDeps) {}

  get terminal(): Terminal | null {
    return this.#terminal;
  }

  /** Messages the run produced for delivery (the no-output rule looks at this). */
  get produced(): number {
    return this.#produced;
  }

  /** The final reply: last completed message, else the last delta's content (§5.4). */
  get reply(): string | null {
    return this.#finalText ?? this.#lastDelta;
  }

  /** Told once when a write of the chain failed (the run should end with `err`); later writes are skipped. */
  onWriteError(fn: (err: unknown) => void): void {
    this.#onWriteError = fn;
  }

  /**
   * Waits until everything handled so far is written and delivered: before a proxy call of the run reads
   * the stores, and at the end of the run. Throws the store error (again, once it happened).
   */
  async flush(): Promise<void> {
    await this.#chain;
    if (this.#writeError) throw this.#writeError.err;
  }

  /**
   * Appends `op` to the chain; a failure stops the chain and is reported once. `later`: an idle chain starts
   * the op on the next turn of the event loop. A runner writes its tool notices and its next call in one
   * write, and the call (a model request) then goes upstream before the notices' records are written, not
   * after; messages and deltas are not held back, their delivery waits on nothing.
   */
  #then(op: () => Promise<void> | void, later = false): void {
    const after = this.#queued++ === 0 && later ? this.#chain.then(nextTurn) : this.#chain;
    this.#chain = after.then(async () => {
      try {
        if (!this.#writeError) await op();
      } catch (err) {
        this.#writeError = { err };
        this.#onWriteError?.(err);
      } finally {
        this.#queued--;
      }
    });
  }

  /** Handles one raw `result`; throws a runner.protocol_error LbotError when it breaks a run rule. */
  handle(raw: unknown, sizeBytes: number): void {
    if (this.#terminal) {
      const type = isRecord(raw) && typeof raw.type === 'string' ? raw.type : 'unknown';
      this.d.warn(`result ${type} arrived after the terminal result of run ${this.d.session.run_id}; ignored`);
      return;
    }
    const result = parseResultEnvelope(raw);
    if (result.run_id && result.run_id !== this.d.session.run_id) {
      throw protocolError(`result run_id ${result.run_id} does not match the run ${this.d.session.run_id}`);
    }
    const n = normalizeResult(result, sizeBytes, this.d.warn);
    switch (n.kind) {
      case 'dropped':
        return;
      case 'unknown':
        this.d.warn(`unknown result type ${n.type}; ignored`);
        return;
      case 'delta':
        this.#produced++;
        this.#lastDelta = typeof n.chunk.content === 'string' ? n.chunk.content : messageText(n.chunk);
        if (this.d.streaming && this.d.binding.delivery_policy.enable_reply) {
          const item: Delivered = { type: 'message.delta', run_id: this.d.session.run_id, chunk: n.chunk };
          this.#then(() => this.d.deliver(item));
        }
        return;
      case 'message':
        this.onMessage(n.message);
        if (n.terminal) this.#terminal = { status: 'completed' };
        return;
      case 'completed':
        this.#terminal = { status: 'completed' };
        return;
      case 'failed':
        this.#terminal = { status: 'failed', error: { code: n.code, message: n.error, retryable: n.retryable, details: {} } };
        return;
      case 'notice':
        this.onNotice(n.type, n.data);
        return;
    }
  }

  private onMessage(message: Message): void {
    const { session, event, stores } = this.d;
    const conversation_id = event.conversation_id;
    if (conversation_id) {
      const refs = new Map<string, JsonObject>();
      for (const ref of [...this.#pendingRefs, ...(message.artifact_refs ?? [])]) {
        const id = typeof ref.artifact_id === 'string' ? ref.artifact_id : null;
        if (id && !refs.has(id)) refs.set(id, ref);
      }
      this.#pendingRefs = [];
      const { artifact_refs: _refs, ...content_json } = message;
      const artifact_refs = [...refs.values()];
      this.#then(async () => {
        await stores.transcript.append({
          event_id: event.event_id,
          conversation_id,
          thread_id: event.thread_id,
          role: 'assistant',
          item_type: 'message',
          content: messageText(message),
          content_json,
          artifact_refs,
          run_id: session.run_id,
          runner_id: session.runner_id,
          metadata: { run_id: session.run_id, runner_id: session.runner_id },
        });
      });
    }
    this.#produced++;
    this.#finalText = messageText(message);
    if (this.d.binding.delivery_policy.enable_reply) this.#then(() => this.d.deliver({ type: 'message.completed', run_id: session.run_id, message }));
  }

  private onNotice(type: string, data: JsonObject): void {
    const at = this.d.nowS();
    switch (type) {
      case 'state.updated':
        return this.onStateUpdated(data, at);
      case 'artifact.created':
        return this.onArtifactCreated(data, at);
      case 'action.requested': {
        const a = ActionRequestedDataSchema.safeParse(data);
        if (!a.success) throw protocolError(`action.requested: ${firstIssue(a.error, 'data').text}`);
        this.#then(async () => {
          await this.logEvent('action.requested', `Action requested (not executed): ${a.data.action}`, { ...a.data }, null);
          await this.d.observe({ at, type, data, executed: false, note: 'platform actions are recorded, never executed' });
        }, true);
        return;
      }
      default: {
        const name = typeof data.tool_name === 'string' ? data.tool_name : 'unknown';
        const callId = typeof data.tool_call_id === 'string' ? data.tool_call_id : null;
        this.#then(async () => {
          await this.logEvent(type, `${type}: ${name}`, data, callId ? { subject_type: 'tool_call', subject_id: callId } : null);
          await this.d.observe({ at, type, data });
        }, true);
      }
    }
  }

  private onStateUpdated(data: JsonObject, at: number): void {
    const parsed = StateUpdatedDataSchema.safeParse(data);
    if (!parsed.success) throw protocolError(`state.updated: ${firstIssue(parsed.error, 'data').text}`);
    const { scope, value } = parsed.data;
    const key = aliasStateKey(parsed.data.key);
    const reject = (why: string) => this.d.warn(`state.updated ${scope}:${key} not written: ${why}`);
    const scopeParsed = StateScopeSchema.safeParse(scope);
    if (!scopeParsed.success) return reject(`unknown scope ${scope}`);
    const validScope = scopeParsed.data;
    let scopeKey: string;
    let json: string;
    try {
      scopeKey = stateScopeKey(this.d.session, validScope);
      json = serializeStateValue(value, this.d.stateValueBytes, key);
    } catch (err) {
      if (err instanceof ApiError) return reject(err.message);
      throw err;
    }
    const { stores, session } = this.d;
    this.#then(async () => {
      await stores.state.set(validScope, scopeKey, key, json, session.state_columns);
      await stores.runs.addStateWrite(session.run_id, { scope, key });
      await this.d.observe({ at, type: 'state.updated', data: { scope, key } });
    });
  }

  private onArtifactCreated(data: JsonObject, at: number): void {
    const parsed = ArtifactCreatedDataSchema.safeParse(data);
    if (!parsed.success) throw protocolError(`artifact.created: ${firstIssue(parsed.error, 'data').text}`);
    const a = parsed.data;
    let content: Buffer | undefined;
    if (a.content_base64 !== undefined) {
      content = decodeBase64Strict(a.content_base64) ?? undefined;
      if (!content) throw protocolError('artifact.created: content_base64 is not valid base64');
      if (content.length > MAX_ARTIFACT_INLINE_BYTES) {
        throw protocolError(`artifact.created: inline content is ${content.length} bytes; the limit is ${MAX_ARTIFACT_INLINE_BYTES}`);
      }
    }
    const { session, event, stores } = this.d;
    // The ref joins the next message now (ids are known); the record is written on the chain.
    const artifact_id = a.artifact_id ?? randomUUID();
    const size_bytes = content ? content.length : (a.size_bytes ?? null);
    const ref = { artifact_id, artifact_type: a.artifact_type, mime_type: a.mime_type ?? null, name: a.name ?? null };
    this.#pendingRefs.push(ref);
    this.#then(async () => {
      try {
        await stores.artifacts.register({
          artifact_id,
          artifact_type: a.artifact_type,
          mime_type: a.mime_type ?? null,
          name: a.name ?? null,
          size_bytes,
          sha256: a.sha256 ?? null,
          source: 'runner',
          conversation_id: event.conversation_id,
          run_id: session.run_id,
          runner_id: session.runner_id,
          bot_id: event.bot_id,
          workspace_id: event.workspace_id,
          expires_at: null,
          metadata: a.metadata ?? {},
          ...(content ? { content } : { storage_type: 'metadata_only' as const, storage_key: null }),
        });
      } catch (err) {
        throw protocolError(`artifact.created: ${err instanceof Error ? err.message : String(err)}`);
      }
      await this.logEvent('artifact.created', `Artifact created: ${a.artifact_type}`, { ...ref, size_bytes }, null);
      await this.d.observe({ at, type: 'artifact.created', data: { ...ref, size_bytes } });
    });
  }

  private async logEvent(
    event_type: string,
    summary: string,
    input_json: JsonObject,
    subject: { subject_type: string; subject_id: string } | null,
  ): Promise<void> {
    const base = eventColumns(this.d.event);
    await this.d.stores.events.append({
      ...base,
      event_id: randomUUID(),
      event_type,
      event_time: this.d.nowS(),
      source: 'runner',
      subject_type: subject?.subject_type ?? null,
      subject_id: subject?.subject_id ?? null,
      input_text: summary,
      input_json,
      raw_ref: null,
      run_id: this.d.session.run_id,
      runner_id: this.d.session.runner_id,
      metadata: {},
    });
  }
}

/** Wraps a thrown value as the error of a failed run. */
export function runErrorOf(err: unknown): ErrorValue {
  if (err instanceof LbotError) return err.toJSON();
  if (err instanceof ApiError) return { code: 'invalid_argument', message: err.message, retryable: false, details: { reason: err.reason } };
  return { code: 'internal', message: err instanceof Error ? err.message : String(err), retryable: false, details: {} };
}
