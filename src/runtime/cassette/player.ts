// `lbot run --replay`: answers model and tool calls from a cassette instead of real providers, collects
// the requests the cassette does not hold, and (with --check) compares the new results with the recorded.
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ModelConfigSchema, type Config } from '../../core/config.js';
import { LbotError } from '../../core/errors.js';
import { ApiError } from '../../core/host/api-error.js';
import type { ModelProvider, ToolDescriptor, ToolProvider } from '../../core/host/ports.js';
import { AnswerDeck } from '../../core/cassette/match.js';
import { compareRuns } from '../../core/cassette/results.js';
import { CassetteSchema, type AnswerKind, type Cassette, type TapeAnswer } from '../../core/cassette/schema.js';
import { ModelReplySchema, proxyMethods, type ModelReply } from '../../core/protocol/proxy.js';
import { JsonObjectSchema } from '../../core/protocol/event.js';
import { parseJsonText } from '../../core/json-parse.js';
import type { LocalHostOptions } from '../local-host.js';
import { TapeLog } from './tape.js';
import { parseOrThrow } from '../../core/zod-issue.js';

type Hooks = Pick<LocalHostOptions, 'decorateModels' | 'decorateTools' | 'observer'>;
type ToolsFactory = NonNullable<LocalHostOptions['tools']>;

export type ReplayMismatch = { run: number; kind: AnswerKind; reason: string; diff: string[] };

export type Player = {
  hooks: Hooks;
  /** The config with the cassette's model ids added, so the same models are granted without their keys. */
  config(base: Config): Config;
  /** Throws `replay.mismatch` naming every unanswerable request, and with `check` every changed result. */
  finish(opts: { check: boolean }): void;
};

const RerankSchema = z.array(z.strictObject({ index: z.number(), relevance_score: z.number() }));
const EmbedSchema = proxyMethods['models.embed'].result;
const CountSchema = proxyMethods['models.count_tokens'].result;
const ToolListSchema = z.array(z.looseObject({ name: z.string(), tool_type: z.string(), description: z.string(), parameters: JsonObjectSchema }));

/** Reads and validates a cassette file (exit 2 for a missing or malformed file). */
export async function readCassette(file: string): Promise<Cassette> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new LbotError('invalid_argument', `--replay ${file}: cannot read the cassette: ${err instanceof Error ? err.message : String(err)}`, {
      hint: 'record one first with lbot run --event F --record FILE',
    });
  }
  return parseOrThrow(CassetteSchema, parseJsonText(text, file, 'invalid_argument'), `--replay ${file}: not a cassette`, '(root)');
}

/** The recorded outcome as the provider's answer: the value, or the same refusal the runner saw. */
function answerOf<T>(answer: TapeAnswer, parse: (v: unknown) => T): T {
  if (!answer.outcome.ok) {
    const { code, message, retryable, details } = answer.outcome.error;
    const { reason, ...extra } = details;
    throw new ApiError(code, message, typeof reason === 'string' ? reason : 'replayed', extra, retryable);
  }
  return parse(answer.outcome.result);
}

export function createPlayer(cassette: Cassette): Player {
  const log = new TapeLog();
  const decks = cassette.runs.map((r) => new AnswerDeck(r.answers));
  const mismatches: ReplayMismatch[] = [];

  /** Serves one request of the run at `index` from its deck, or records the mismatch and refuses it. */
  const serve = <T>(index: number | undefined, kind: AnswerKind, request: unknown, parse: (v: unknown) => T): { answer: TapeAnswer; value: () => T } => {
    const deck = index === undefined ? undefined : decks[index];
    const run = (index ?? 0) + 1;
    const match = deck
      ? deck.take(kind, request)
      : { ok: false as const, reason: `the cassette holds ${cassette.runs.length} run(s); this is run ${run}`, diff: [] };
    if (!match.ok) {
      mismatches.push({ run, kind, reason: match.reason, diff: match.diff });
      throw new ApiError('runtime_error', `replay: ${match.reason} (run ${run}, ${kind})`, 'replay_mismatch');
    }
    return { answer: match.answer, value: () => answerOf(match.answer, parse) };
  };
  const current = () => log.current()?.index;
  const parseReply = (v: unknown): ModelReply => ModelReplySchema.parse(v);

  const models: ModelProvider = {
    async invoke(req) {
      return serve(
        current(),
        'models.invoke',
        { model_id: req.model_id, messages: req.messages, tools: req.tools, extra_args: req.extra_args },
        parseReply,
      ).value();
    },
    async stream(req, onChunk) {
      const served = serve(
        current(),
        'models.stream',
        { model_id: req.model_id, messages: req.messages, tools: req.tools, extra_args: req.extra_args },
        parseReply,
      );
      for (const chunk of served.answer.chunks ?? []) onChunk(chunk);
      return served.value();
    },
    async rerank(req) {
      return serve(current(), 'models.rerank', { model_id: req.model_id, query: req.query, documents: req.documents }, (v) => RerankSchema.parse(v)).value();
    },
    async embed(req) {
      return serve(current(), 'models.embed', { model_id: req.model_id, input: req.input }, (v) => EmbedSchema.parse(v)).value();
    },
    async countTokens(req) {
      return serve(current(), 'models.count_tokens', req, (v) => CountSchema.parse(v)).value();
    },
  };

  const tools = (): ToolsFactory => async (req) => {
    const index = log.tape(req.run_id).index;
    const listed = decks[index]?.first('tools.list');
    if (!listed) return undefined;
    const list: ToolDescriptor[] = answerOf(listed, (v) => ToolListSchema.parse(v));
    const provider: ToolProvider = {
      list: async () => list,
      call: async (name, parameters) => serve(index, 'tools.call', { name, parameters }, (v) => v).value(),
    };
    return provider;
  };

  return {
    hooks: { decorateModels: () => models, decorateTools: () => tools(), observer: log.observer() },
    config(base) {
      const known = new Set(base.models.map((m) => m.id));
      const added = cassette.models.filter((m) => !known.has(m.id));
      if (added.length === 0) return base;
      return { ...base, models: [...base.models, ...added.map((m) => ModelConfigSchema.parse(m))] };
    },
    finish({ check }) {
      const lines: string[] = [];
      for (const m of mismatches) lines.push(`run ${m.run}: ${m.kind}: ${m.reason}`, ...m.diff.map((l) => `  ${l}`));
      if (check)
        lines.push(
          ...compareRuns(
            cassette.runs,
            log.tapes.flatMap((t) => (t.results ? [t.results] : [])),
          ),
        );
      if (lines.length === 0) return;
      const what = mismatches.length > 0 ? `${mismatches.length} request(s) the cassette does not hold` : 'results that differ from the cassette';
      throw new LbotError('replay.mismatch', `replay found ${what}:\n${lines.join('\n')}`, {
        details: { mismatches, diff: lines },
        hint: 're-record the cassette with --record if the change is intended',
      });
    },
  };
}
