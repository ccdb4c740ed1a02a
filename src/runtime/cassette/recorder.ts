// `lbot run --record`: passes model and tool calls through to the real providers and writes down every
// answer, every proxy call and the final results of each run into a cassette file.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../core/config.js';
import { toApiError } from '../../core/host/api-error.js';
import type { ModelProvider, ToolProvider } from '../../core/host/ports.js';
import type { LocalHostOptions } from '../local-host.js';
import { CASSETTE_VERSION, type Cassette, type TapeAnswer } from '../../core/cassette/schema.js';
import { writePrivateFile } from '../../core/stores/private-files.js';
import { LBOT_VERSION } from '../../package-root.js';
import { TapeLog } from './tape.js';

type Hooks = Pick<LocalHostOptions, 'decorateModels' | 'decorateTools' | 'observer'>;
type ToolsFactory = NonNullable<LocalHostOptions['tools']>;

export type Recorder = {
  hooks: Hooks;
  /** Notes the models of the run's config (ids only, never keys) for the cassette. */
  useConfig(config: Config): void;
  save(file: string): Promise<Cassette>;
};

/** Runs `call`, then stores its outcome as one answer of `push`'s run. */
async function tap<T>(
  push: (a: TapeAnswer) => void,
  kind: TapeAnswer['kind'],
  request: unknown,
  call: () => Promise<T>,
  chunks?: Record<string, unknown>[],
): Promise<T> {
  try {
    const result = await call();
    push({ kind, request, ...(chunks ? { chunks } : {}), outcome: { ok: true, result } });
    return result;
  } catch (err) {
    push({ kind, request, ...(chunks ? { chunks } : {}), outcome: { ok: false, error: toApiError(err).toWire() } });
    throw err;
  }
}

export function createRecorder(): Recorder {
  const log = new TapeLog();
  let models: Cassette['models'] = [];
  const pushCurrent = (a: TapeAnswer) => log.current()?.answers.push(a);

  const decorateModels = (real: ModelProvider): ModelProvider => ({
    invoke: (req) =>
      tap(pushCurrent, 'models.invoke', { model_id: req.model_id, messages: req.messages, tools: req.tools, extra_args: req.extra_args }, () =>
        real.invoke(req),
      ),
    stream: (req, onChunk) => {
      const chunks: Record<string, unknown>[] = [];
      const request = { model_id: req.model_id, messages: req.messages, tools: req.tools, extra_args: req.extra_args };
      const relay = (chunk: Parameters<typeof onChunk>[0]) => {
        chunks.push(chunk);
        onChunk(chunk);
      };
      return tap(pushCurrent, 'models.stream', request, () => real.stream(req, relay), chunks);
    },
    rerank: (req) => tap(pushCurrent, 'models.rerank', { model_id: req.model_id, query: req.query, documents: req.documents }, () => real.rerank(req)),
    embed: (req) => tap(pushCurrent, 'models.embed', { model_id: req.model_id, input: req.input }, () => real.embed(req)),
    countTokens: (req) => tap(pushCurrent, 'models.count_tokens', req, () => real.countTokens(req)),
    prepare: (model_ids) => real.prepare?.(model_ids),
  });

  const decorateTools = (real: ToolsFactory | undefined): ToolsFactory | undefined => {
    if (!real) return undefined;
    return async (req) => {
      const provider = await real(req);
      if (!provider) return undefined;
      const push = (a: TapeAnswer) => log.tape(req.run_id).answers.push(a);
      let listed = false;
      const wrapped: ToolProvider = {
        list: async () => {
          const tools = await provider.list();
          if (!listed) push({ kind: 'tools.list', request: null, outcome: { ok: true, result: tools } });
          listed = true;
          return tools;
        },
        call: (name, parameters, ctx) => tap(push, 'tools.call', { name, parameters }, () => provider.call(name, parameters, ctx)),
      };
      return wrapped;
    };
  };

  return {
    hooks: { decorateModels, decorateTools, observer: log.observer() },
    useConfig(config) {
      models = config.models.map((m) => ({ id: m.id, provider: m.provider, model_type: m.model_type }));
    },
    async save(file) {
      const cassette: Cassette = {
        lbot_cassette: CASSETTE_VERSION,
        recorded_at: new Date().toISOString(),
        lbot_version: LBOT_VERSION,
        models,
        runs: log.tapes
          .filter((t) => t.results !== null)
          .map((t) => ({
            event_id: t.event_id,
            event_type: t.event_type,
            runner_id: t.runner_id,
            calls: t.calls,
            answers: t.answers,
            results: t.results ?? { status: 'failed', error: null, reply: null, delivered: [], observed: [] },
          })),
      };
      await mkdir(path.dirname(path.resolve(file)), { recursive: true });
      // Cassettes hold whole conversations and tool results: 0600, through a temp file created 0600.
      writePrivateFile(file, `${JSON.stringify(cassette, null, 2)}\n`);
      return cassette;
    },
  };
}
