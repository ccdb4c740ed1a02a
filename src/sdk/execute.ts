// Runs one runner for one run: builds ctx (signal aborted on cancel or at the deadline), stamps and
// emits each yielded result, and turns the generator's end into the `run` reply status.
import type { RunContext, RunStatusSchema } from '../core/protocol/index.js';
import type { z } from 'zod';
import { createRunnerApi, type ApiTransport } from './client.js';
import type { Plugin, RunnerResult } from './define.js';

export type RunStatus = z.infer<typeof RunStatusSchema>;

/**
 * The host owns timeouts: at the deadline it sends run/cancel and records `timed_out`. The SDK's own
 * deadline abort comes a little later so a runner's early `cancelled` answer never races the host's timer.
 */
export const SDK_DEADLINE_GRACE_MS = 250;

/** The handle of a run in progress: cancel() aborts its signal; the runner decides what to do. */
export type RunHandle = { cancel(reason?: string): void; readonly done: Promise<RunStatus> };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Starts `runner_name` of `plugin` for one run. `emit` receives every result in order, stamped with
 * run_id, sequence and timestamp; a throw becomes `run.failed {code: 'runner.exception'}`.
 */
export function executeRun(
  plugin: Plugin,
  params: { run_id: string; runner_name: string; context: RunContext },
  transport: ApiTransport,
  emit: (result: RunnerResult) => void,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): RunHandle {
  const { run_id, runner_name, context } = params;
  const controller = new AbortController();
  const deadline_at = context.runtime.deadline_at;
  let timer: NodeJS.Timeout | undefined;
  if (deadline_at !== null) {
    timer = setTimeout(
      () => controller.abort(new DOMException(`run ${run_id} passed its deadline`, 'TimeoutError')),
      Math.max(0, deadline_at * 1000 - Date.now() + SDK_DEADLINE_GRACE_MS),
    );
    timer.unref();
  }
  let sequence = 0;
  const stamp = (item: RunnerResult): RunnerResult => ({
    ...item,
    run_id: item.run_id ?? run_id,
    sequence: item.sequence ?? sequence++,
    timestamp: item.timestamp ?? Date.now() / 1000,
  });

  async function drive(): Promise<RunStatus> {
    const runner = Object.hasOwn(plugin.runners, runner_name) ? plugin.runners[runner_name] : undefined;
    if (!runner) {
      const known = Object.keys(plugin.runners).join(', ') || 'none';
      emit(
        stamp({
          type: 'run.failed',
          data: { error: `this plugin has no runner named ${JSON.stringify(runner_name)} (it has: ${known})`, code: 'runner.not_found', retryable: false },
        }),
      );
      return 'failed';
    }
    const ctx = { ...context, signal: controller.signal };
    const api = createRunnerApi(transport, { run_id, deadline_at });
    let failed = false;
    try {
      for await (const item of runner.run(ctx, api)) {
        if (!isRecord(item) || typeof item.type !== 'string')
          throw new TypeError(`runner yielded ${JSON.stringify(item) ?? typeof item}, which is not a result object with a string type`);
        if (item.type === 'run.failed') failed = true;
        emit(stamp(item));
      }
    } catch (err) {
      if (controller.signal.aborted) return 'cancelled';
      log(`runner ${runner_name} threw during run ${run_id}: ${err instanceof Error && err.stack ? err.stack : describe(err)}`);
      emit(stamp({ type: 'run.failed', data: { error: describe(err), code: 'runner.exception', retryable: false } }));
      return 'failed';
    }
    if (controller.signal.aborted) return 'cancelled';
    return failed ? 'failed' : 'completed';
  }

  const done = drive().finally(() => clearTimeout(timer));
  return {
    cancel: (reason = `run ${run_id} was cancelled by the host`) => {
      if (!controller.signal.aborted) controller.abort(new DOMException(reason, 'AbortError'));
    },
    done,
  };
}
