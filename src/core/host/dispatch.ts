// The one dispatch policy (runner-protocol.md §3.4): which binding runs an event, for `run`, `dev` and
// `serve` alike. The caller names what it was given; this decides, in one order, and throws the coded
// errors. One event runs one binding: the first after sorting (§3.4 rule 5), never a fan-out.
import { resolveRunnerAlias, type Config } from '../config.js';
import { LbotError } from '../errors.js';
import { defaultCliBinding, type Binding } from '../protocol/binding.js';
import type { EventEnvelope } from '../protocol/event.js';
import type { RunnerDescriptor } from '../protocol/manifest.js';
import { resolveBindings } from './binding-resolver.js';
import type { RunnerCatalog } from './ports.js';

/** A binding the caller named: `configured` (by id, from the operator's config) keeps its runner. */
export type NamedBinding = { binding: Binding; source: 'configured' | 'given' };

export type DispatchRequest = {
  event: EventEnvelope;
  config: Pick<Config, 'bindings' | 'runner_aliases'>;
  /** `--binding FILE`, or `binding_id` / `binding` of POST /v1/runs. */
  binding?: NamedBinding | undefined;
  /** `--runner` / `runner_id`: a runner id or alias. */
  runner?: string | undefined;
  /** `--config` / `config`: replaces the binding's runner config. */
  runnerConfig?: Record<string, unknown> | undefined;
  /**
   * The runners to pick from when nothing is named and no configured binding matches (`dev`: the
   * served runners, from a directory). Absent: no fallback, the event is unhandled.
   */
  fallback?: { catalog: RunnerChoice; from: string } | undefined;
};

export type RunnerChoice = Pick<RunnerCatalog, 'runners' | 'warnings'>;

/** The runner to pick in a catalog with none named: the only one, or the one named `default`. */
export function soleRunner({ runners, warnings }: RunnerChoice, from: string): RunnerDescriptor {
  const [only] = runners;
  if (runners.length === 1 && only) return only;
  const defaults = runners.filter((r) => r.runner_name === 'default');
  const [def] = defaults;
  if (defaults.length === 1 && def) return def;
  throw new LbotError(
    'runner.not_found',
    `no runner to pick in ${from}: ${runners.length === 0 ? 'it has no valid runner' : 'it has several; pass --runner'}`,
    {
      details: { from, runners: runners.map((r) => r.id), warnings: [...warnings] },
      hint: 'pass --runner ID',
    },
  );
}

/** The binding that runs the event, before the runner config the caller passed is applied. */
function chooseBinding(req: DispatchRequest): Binding {
  const runner = req.runner === undefined ? undefined : resolveRunnerAlias(req.runner, req.config);
  if (req.binding) {
    const { binding, source } = req.binding;
    if (runner === undefined || runner === binding.runner_id) return binding;
    if (source === 'configured') {
      throw new LbotError('invalid_argument', `binding ${binding.binding_id} runs ${binding.runner_id}; runner ${runner} cannot replace it`, {
        details: { path: ['runner_id'] },
      });
    }
    return { ...binding, runner_id: runner };
  }
  if (runner !== undefined) return defaultCliBinding(runner);
  const [first] = resolveBindings(req.event, req.config.bindings);
  if (first) return first;
  if (req.fallback) return defaultCliBinding(soleRunner(req.fallback.catalog, req.fallback.from).id);
  throw new LbotError('binding.not_found', `no enabled binding handles ${req.event.event_type}`, {
    details: { event_id: req.event.event_id, event_type: req.event.event_type },
    hint: 'name a runner (--runner ID, or runner_id over HTTP), or add a binding with `lbot binding add`',
  });
}

/** The one binding that runs `req.event`, with the caller's runner config in place of the binding's. */
export function dispatch(req: DispatchRequest): Binding {
  const binding = chooseBinding(req);
  return req.runnerConfig ? { ...binding, runner_config: req.runnerConfig } : binding;
}
