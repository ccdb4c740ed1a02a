// What a proxy handler receives: the authorized session, parsed params and the host's services.
import type { AsyncStores } from '../../stores/async.js';
import type { KnowledgePort, ModelProvider, ToolProvider, Clock } from '../ports.js';
import type { RunSession } from '../session.js';
import type { JsonObject } from '../../protocol/event.js';
import type { ModelContexts } from '../model-contexts.js';

export type HandlerEnv = {
  stores: AsyncStores;
  models: ModelProvider;
  /** The message contexts of live runs' model calls. */
  contexts: ModelContexts;
  /** The tool table of a run (built at run start), or undefined when the run has none. */
  toolsFor(run_id: string): ToolProvider | undefined;
  knowledge: KnowledgePort;
  clock: Clock;
  limits: { stateValueBytes: number; storageValueBytes: number };
  warn(run_id: string, message: string): void;
};

export type HandlerCall<P> = {
  session: RunSession;
  params: P;
  env: HandlerEnv;
  signal: AbortSignal;
  notify(method: string, params: JsonObject): void;
};
