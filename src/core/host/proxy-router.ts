// Authorizes and dispatches every plugin → host proxy call, and audits each one in the run record
// (runner-protocol.md §6.2–§6.6). The method table in protocol/proxy.ts is the single registration key.
import { isProxyMethod, proxyMethods, type ProxyMethod, type ProxyParams, type ProxyResult } from '../protocol/proxy.js';
import { parseRunnerId, pluginIdentity } from '../protocol/runner-id.js';
import { isRecord } from '../json.js';
import type { ApiCallAudit } from '../stores/types.js';
import { ApiError, toApiError } from './api-error.js';
import type { ProxyCall } from './ports.js';
import type { ProxyCallRecord } from './observer.js';
import { isResourceAllowed, type RunSession, type SessionRegistry } from './session.js';
import type { HandlerCall, HandlerEnv } from './api/types.js';
import { historyPage, historySearch } from './api/history.js';
import { eventsGet, eventsPage } from './api/events.js';
import { artifactsMetadata, artifactsReadRange } from './api/artifacts.js';
import { stateDelete, stateGet, stateList, stateSet } from './api/state.js';
import { storageDelete, storageGet, storageList, storageSet } from './api/storage.js';
import {
  filesGet,
  knowledgeList,
  knowledgeRetrieve,
  modelsCountTokens,
  modelsEmbed,
  modelsInvoke,
  modelsRerank,
  modelsStream,
  platformRequestAction,
  toolsCall,
  toolsGetDetail,
} from './api/capabilities.js';
import { firstIssue } from '../zod-issue.js';
import { HOST_TOOL_NAMES } from '../tools/native-defs.js';

type Handler<M extends ProxyMethod> = (call: HandlerCall<ProxyParams<M>>) => ProxyResult<M> | Promise<ProxyResult<M>>;

const handlers: { [M in ProxyMethod]: Handler<M> } = {
  'models.invoke': modelsInvoke,
  'models.stream': modelsStream,
  'models.rerank': modelsRerank,
  'models.count_tokens': modelsCountTokens,
  'models.embed': modelsEmbed,
  'tools.get_detail': toolsGetDetail,
  'tools.call': toolsCall,
  'knowledge.list': knowledgeList,
  'knowledge.retrieve': knowledgeRetrieve,
  'history.page': historyPage,
  'history.search': historySearch,
  'events.get': eventsGet,
  'events.page': eventsPage,
  'artifacts.metadata': artifactsMetadata,
  'artifacts.read_range': artifactsReadRange,
  'state.get': stateGet,
  'state.set': stateSet,
  'state.delete': stateDelete,
  'state.list': stateList,
  'storage.get': storageGet,
  'storage.set': storageSet,
  'storage.delete': storageDelete,
  'storage.list': storageList,
  'files.get': filesGet,
  'platform.request_action': platformRequestAction,
};

/** The audit's resource string: which model, tool, conversation, event, artifact, state key or area. */
function auditResource(method: ProxyMethod, p: Record<string, unknown>, session: RunSession | undefined): string | null {
  const s = (k: string) => (typeof p[k] === 'string' ? p[k] : null);
  switch (proxyMethods[method].resource) {
    case 'model':
      return s('model_id');
    case 'tool':
      return s('tool_name');
    case 'knowledge_base':
      return s('kb_id');
    case 'knowledge_bases':
      return 'knowledge_bases';
    case 'history': {
      const filters = isRecord(p.filters) ? p.filters : {};
      const conv = s('conversation_id') ?? (typeof filters.conversation_id === 'string' ? filters.conversation_id : null);
      return `conversation:${conv ?? session?.conversation_id ?? 'none'}`;
    }
    case 'event':
      return method === 'events.get' ? s('event_id') : `conversation:${s('conversation_id') ?? session?.conversation_id ?? 'none'}`;
    case 'artifact':
      return s('artifact_id');
    case 'state':
      return `${s('scope') ?? '?'}:${s('key') ?? s('prefix') ?? ''}`;
    case 'storage':
      return `storage:${s('area') ?? '?'}${s('key') ? `/${s('key')}` : ''}`;
    case 'file':
      return s('file_key');
    case 'platform':
      return s('action');
  }
}

/** Validator A (§6.2): the model, tool, knowledge base or storage area must be in the run's resources. */
function checkResource(session: RunSession, resource: string, params: Record<string, unknown>, knownTool: (name: string) => boolean): void {
  const check = (kind: 'model' | 'tool' | 'knowledge_base' | 'storage', field: string) => {
    const id = String(params[field]);
    if (!isResourceAllowed(session, kind, id)) {
      // docs/tools.md: a name that is neither lbot's own nor in the run's tool table is not_found, not unauthorized.
      if (kind === 'tool' && !knownTool(id)) throw new ApiError('not_found', `tool ${id} not found`, 'tool_not_found', { tool_name: id });
      throw new ApiError(
        'unauthorized',
        `${kind === 'storage' ? 'storage area' : kind} ${id} is not authorized for this agent run`,
        'resource_not_authorized',
        { [kind]: id },
      );
    }
  };
  if (resource === 'model') check('model', 'model_id');
  else if (resource === 'tool') check('tool', 'tool_name');
  else if (resource === 'knowledge_base') check('knowledge_base', 'kb_id');
  else if (resource === 'storage') check('storage', 'area');
}

export type ProxyRouterDeps = {
  sessions: SessionRegistry;
  env: HandlerEnv;
  /**
   * Appends an audit entry to a run record; settles once the entry is durable (rejects when it could not be
   * written). `now`: the entry and every one before it are written before this returns (a refusal).
   */
  audit(run_id: string, entry: ApiCallAudit, now: boolean): void | Promise<void>;
  /** Appends the audit entry of a call no run can be named for; settles once it is durable. */
  auditUnattributed(entry: ApiCallAudit): Promise<void>;
  /** Runner id of a finished run, for attributing late calls (AC-028). */
  runnerOf(run_id: string): Promise<string | null>;
  /** Runs before a call of a live run is dispatched: records the run deferred are written first. */
  beforeCall?(run_id: string, method: ProxyMethod): Promise<void> | void;
  /** Sees every answered call with its params and outcome (record/replay, dev dashboard). */
  observe?(record: ProxyCallRecord): void;
};

export class ProxyRouter {
  constructor(private readonly deps: ProxyRouterDeps) {}

  /** Entry point for the plugin connection: resolves with the result or rejects with ApiError. */
  async handle(call: ProxyCall): Promise<unknown> {
    const claimed = typeof call.params.run_id === 'string' ? call.params.run_id : '';
    const session = claimed ? this.deps.sessions.get(claimed) : undefined;
    const method = call.method;
    let resource: string | null = null;
    let outcome: { ok: true; result: unknown } | { ok: false; error: ApiError };
    try {
      if (!isProxyMethod(method)) throw new ApiError('invalid_argument', `unknown method ${method}`, 'unknown_method');
      resource = auditResource(method, call.params, session);
      if (session) await this.deps.beforeCall?.(session.run_id, method);
      outcome = { ok: true, result: await this.dispatch(method, call, session) };
    } catch (err) {
      outcome = { ok: false, error: toApiError(err) };
    }
    // A refusal is answered once its audit row (and every earlier one) is durable; an allowed call is answered
    // at once, its row committed with the next batch (audit-buffer.ts), and a failed write fails its run (host.ts).
    const entry = { action: method, resource, decision: outcome.ok ? ('allowed' as const) : ('denied' as const), code: outcome.ok ? null : outcome.error.code };
    try {
      if (outcome.ok) this.record(call, claimed, entry, false).catch(() => undefined);
      else await this.record(call, claimed, entry, true);
    } catch {
      outcome = {
        ok: false,
        error: new ApiError('runtime_error', `${method}: the audit of this call could not be written; the call is refused`, 'audit_failed', {}, true),
      };
    }
    const wire = outcome.ok ? { ok: true as const, result: outcome.result } : { ok: false as const, error: outcome.error.toWire() };
    this.deps.observe?.({ run_id: claimed, caller_plugin: call.caller_plugin, action: method, params: call.params, outcome: wire });
    if (!outcome.ok) throw outcome.error;
    return outcome.result;
  }

  private async dispatch<M extends ProxyMethod>(method: M, call: ProxyCall, session: RunSession | undefined): Promise<ProxyResult<M>> {
    const spec = proxyMethods[method];
    const parsed = spec.params.safeParse(call.params);
    if (!parsed.success) {
      const issue = firstIssue(parsed.error, 'params');
      const { path } = issue;
      const reason =
        path[0] === 'run_id' || issue.code === 'invalid_type' ? 'missing_argument' : path.some((p) => p.endsWith('cursor')) ? 'bad_cursor' : 'bad_argument';
      const scopeReason = path[0] === 'scope' ? 'bad_scope' : reason;
      throw new ApiError('invalid_argument', `${method}: ${issue.text}`, scopeReason, { path });
    }
    if (!session) throw new ApiError('unauthorized', 'run session not found or expired', 'session_not_found');
    if (session.plugin_identity !== call.caller_plugin) throw new ApiError('unauthorized', 'plugin identity mismatch', 'identity_mismatch');
    const nowMs = this.deps.env.clock.now();
    if (session.deadline_at !== null && nowMs / 1000 > session.deadline_at) {
      throw new ApiError('deadline_exceeded', 'the run deadline has passed', 'run_deadline');
    }
    if (spec.permission) {
      const [group, op] = spec.permission;
      const granted: readonly string[] = session.permissions[group];
      if (!granted.includes(op)) throw new ApiError('unauthorized', `${method} access not authorized (manifest lacks ${group}: ${op})`, 'permission_denied');
    }
    checkResource(session, spec.resource, parsed.data, (name) => HOST_TOOL_NAMES.has(name) || (this.deps.env.toolsFor(session.run_id)?.has?.(name) ?? true));
    this.deps.sessions.touch(session.run_id, nowMs / 1000);
    // The table is indexed by the same key as the schema that parsed the params, so the pairing holds.
    const handler = handlers[method] as Handler<M>;
    return await handler({
      session,
      params: parsed.data as ProxyParams<M>,
      env: this.deps.env,
      get signal() {
        return call.signal;
      },
      notify: call.notify,
    });
  }

  /**
   * Attributes an audit entry: to the claimed run when the caller owns it, else to the caller's live
   * runs (a foreign or unknown run id, AC-027/AC-029), else to the claimed finished run of this plugin (AC-028),
   * else to the unattributed audit with the caller's plugin identity. Settles once every entry is durable.
   */
  private async record(call: ProxyCall, claimed: string, entry: Omit<ApiCallAudit, 'at' | 'caller_plugin' | 'as_run_id'>, now: boolean): Promise<void> {
    const full: ApiCallAudit = { ...entry, at: this.deps.env.clock.now() / 1000, caller_plugin: call.caller_plugin, as_run_id: claimed };
    const owned = claimed ? this.deps.sessions.get(claimed) : undefined;
    if (owned && owned.plugin_identity === call.caller_plugin) return await this.deps.audit(claimed, full, now);
    const live = this.deps.sessions.byPlugin(call.caller_plugin);
    if (live.length > 0) {
      for (const s of live) await this.deps.audit(s.run_id, full, now);
      return;
    }
    const runner = claimed ? await this.deps.runnerOf(claimed) : null;
    const parts = runner ? parseRunnerId(runner) : null;
    if (parts && pluginIdentity(parts) === call.caller_plugin) return await this.deps.audit(claimed, full, now);
    await this.deps.auditUnattributed(full);
  }
}
