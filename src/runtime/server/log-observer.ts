// What the operator log records of runs and plugin processes: run start and end (status, duration, error
// code), plugin process start, crash and restart.
import type { HostObserver } from '../../core/host/observer.js';
import type { ServeLogger } from './logger.js';

export function logObserver(logger: ServeLogger, now: () => number = Date.now): HostObserver {
  const startedAt = new Map<string, number>();
  return {
    onRunStarted(run) {
      startedAt.set(run.run_id, now());
      logger.info({ event: 'run.start', run_id: run.run_id, runner_id: run.runner_id, event_id: run.event_id, event_type: run.event_type }, 'run started');
    },
    onRunEnded(outcome) {
      const at = startedAt.get(outcome.run_id);
      startedAt.delete(outcome.run_id);
      const record = {
        event: 'run.end',
        run_id: outcome.run_id,
        runner_id: outcome.runner_id,
        binding_id: outcome.binding_id,
        status: outcome.status,
        duration_ms: at === undefined ? null : Math.max(0, now() - at),
        error_code: outcome.error?.code ?? null,
      };
      if (outcome.status === 'completed' || outcome.status === 'cancelled') logger.info(record, `run ${outcome.status}`);
      else logger.warn({ ...record, error: outcome.error?.message ?? null }, `run ${outcome.status}`);
    },
    onPluginProcess(e) {
      if (e.kind === 'started') {
        if (e.restart) logger.warn({ event: 'plugin.restart', plugin: e.plugin, pgid: e.pgid }, 'plugin process restarted after a failure');
        else logger.info({ event: 'plugin.start', plugin: e.plugin, pgid: e.pgid }, 'plugin process started');
      } else if (e.failure) {
        logger.error({ event: 'plugin.crash', plugin: e.plugin, pgid: e.pgid, code: e.failure.code, error: e.failure.message }, 'plugin process failed');
      } else {
        logger.debug({ event: 'plugin.exit', plugin: e.plugin, pgid: e.pgid }, 'plugin process stopped');
      }
    },
  };
}
