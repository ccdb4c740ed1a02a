// Replay matching: answers a model or tool request from the recorded answers of the same run, in order.
import type { AnswerKind, TapeAnswer } from './schema.js';
import { lineDiff } from './diff.js';
import { stableJson, stablePretty } from './normalize.js';

export type AnswerMatch = { ok: true; answer: TapeAnswer } | { ok: false; reason: string; diff: string[] };

/** Answers of one run, consumed as the replayed run asks for them. */
export class AnswerDeck {
  readonly #answers: readonly TapeAnswer[];
  readonly #used = new Set<number>();

  constructor(answers: readonly TapeAnswer[]) {
    this.#answers = answers;
  }

  /** The first unused answer of `kind` whose request equals `request`; else why not, with a diff. */
  take(kind: AnswerKind, request: unknown): AnswerMatch {
    const key = stableJson(request);
    const candidates = this.#answers.map((a, index) => ({ a, index })).filter(({ a, index }) => a.kind === kind && !this.#used.has(index));
    const hit = candidates.find(({ a }) => stableJson(a.request) === key);
    if (hit) {
      this.#used.add(hit.index);
      return { ok: true, answer: hit.a };
    }
    const nearest = candidates[0];
    if (!nearest) {
      const recorded = this.#answers.filter((a) => a.kind === kind).length;
      return {
        ok: false,
        reason: `the cassette holds ${recorded} ${kind} call(s) for this run and all were used`,
        diff: lineDiff('(no recorded call)', stablePretty(request)),
      };
    }
    return {
      ok: false,
      reason: `the cassette holds no ${kind} call with this request`,
      diff: lineDiff(stablePretty(nearest.a.request), stablePretty(request)),
    };
  }

  /** The recorded answer of a kind that is not matched by request (the tool list of the run). */
  first(kind: AnswerKind): TapeAnswer | undefined {
    return this.#answers.find((a) => a.kind === kind);
  }

  /** Recorded answers the replay never asked for. */
  unused(): TapeAnswer[] {
    return this.#answers.filter((a, index) => !this.#used.has(index) && a.kind !== 'tools.list');
  }
}
