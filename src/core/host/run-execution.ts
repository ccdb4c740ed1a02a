// One run on a plugin connection: sends `run`, feeds results to the processor, and ends the run on the first
// of terminal result, reply, error, deadline or cancel — with cancel, grace and kill (runner-protocol.md §6.7–§6.8).
import type { RunContext } from '../protocol/context.js';
import { parseRunnerId } from '../protocol/runner-id.js';
import { LbotError } from '../errors.js';
import { isRecord } from '../json.js';
import type { RunStatus } from '../stores/types.js';
import type { Clock, PluginConnection } from './ports.js';
import type { ErrorValue } from '../protocol/error-value.js';
import { runErrorOf, type ResultProcessor } from './result-processor.js';
import type { RunSession, SessionRegistry } from './session.js';

export type ExecuteEnv = {
  clock: Clock;
  sessions: SessionRegistry;
  graceMs: number;
  warnRun(run_id: string, message: string): void;
};

export type ExecuteRequest = { signal?: AbortSignal | undefined };

type Ending =
  | { kind: 'terminal' }
  | { kind: 'reply'; status: 'completed' | 'failed' | 'cancelled' }
  | { kind: 'error'; error: ErrorValue }
  | { kind: 'timeout' }
  | { kind: 'cancelled' };

export async function executeRun(
  env: ExecuteEnv,
  conn: PluginConnection,
  session: RunSession,
  req: ExecuteRequest,
  processor: ResultProcessor,
  context: RunContext,
): Promise<{ status: Exclude<RunStatus, 'running'>; error: ErrorValue | null }> {
  const { clock, sessions, graceMs, warnRun } = env;
  let settle!: (e: Ending) => void;
  const ending = new Promise<Ending>((resolve) => (settle = resolve));
  let over = false;
  const reply = conn.run({ run_id: session.run_id, runner_name: parseRunnerId(session.runner_id)?.runner_name ?? 'default', context }, (raw) => {
    // Once the host has ended the run (deadline, cancel, error), late results are dropped, never delivered.
    if (over && !processor.terminal) {
      const type = isRecord(raw) && typeof raw.type === 'string' ? raw.type : 'unknown';
      warnRun(session.run_id, `result ${type} arrived after run ${session.run_id} had ended; ignored`);
      return;
    }
    try {
      processor.handle(raw, Buffer.byteLength(JSON.stringify(raw) ?? '', 'utf8'));
      if (processor.terminal) settle({ kind: 'terminal' });
    } catch (err) {
      settle({ kind: 'error', error: runErrorOf(err) });
    }
  });
  processor.onWriteError((err) => settle({ kind: 'error', error: runErrorOf(err) }));
  const replied = reply.then(
    (r) => settle({ kind: 'reply', status: r.status }),
    (err: unknown) => settle({ kind: 'error', error: runErrorOf(err) }),
  );
  const cleanups: Array<() => void> = [];
  if (session.deadline_at !== null) {
    cleanups.push(clock.after(session.deadline_at * 1000 - clock.now(), () => settle({ kind: 'timeout' })));
  }
  if (req.signal) {
    const onAbort = () => settle({ kind: 'cancelled' });
    if (req.signal.aborted) onAbort();
    req.signal.addEventListener('abort', onAbort, { once: true });
    cleanups.push(() => req.signal?.removeEventListener('abort', onAbort));
  }
  let end = await ending;
  over = true;
  // What the processor deferred is on record before the run's outcome is.
  try {
    await processor.flush();
  } catch (err) {
    if (end.kind !== 'error') end = { kind: 'error', error: runErrorOf(err) };
  }
  for (const c of cleanups) c();
  // The run is over for the host: later proxy calls with this run_id are refused (AC-028).
  sessions.unregister(session.run_id);

  const waitReply = async (): Promise<boolean> => {
    let cancel = () => {};
    const gone = new Promise<boolean>((resolve) => (cancel = clock.after(graceMs, () => resolve(false))));
    try {
      return await Promise.race([replied.then(() => true), gone]);
    } finally {
      cancel();
    }
  };
  /** Cancel on the wire, then a grace period, then kill the group if the process serves nothing else. */
  const stopRun = async () => {
    conn.cancel(session.run_id);
    if (await waitReply()) return;
    if (conn.activeRuns().every((id) => id === session.run_id)) await conn.kill();
  };

  switch (end.kind) {
    case 'terminal': {
      await waitReply(); // lets stray late results surface as warnings (AC-082)
      const t = processor.terminal;
      if (t?.status === 'failed') return { status: 'failed', error: t.error };
      return processor.produced > 0 ? { status: 'completed', error: null } : { status: 'failed', error: noOutput() };
    }
    case 'reply':
      if (end.status === 'cancelled') return { status: 'cancelled', error: cancelledError() };
      if (end.status === 'failed') {
        return {
          status: 'failed',
          error: { code: 'runner.error', message: 'the runner ended the run with status failed and no run.failed result', retryable: false, details: {} },
        };
      }
      return processor.produced > 0 ? { status: 'completed', error: null } : { status: 'failed', error: noOutput() };
    case 'error':
      if (end.error.code === 'runner.protocol_error' || end.error.code === 'internal') await stopRun();
      return { status: 'failed', error: withStderr(end.error, conn) };
    case 'timeout': {
      await stopRun();
      const secs = Math.round(((session.deadline_at ?? 0) - session.started_at) * 10) / 10;
      return {
        status: 'timed_out',
        error: {
          code: 'runner.timeout',
          message: `runner ${session.runner_id} exceeded its deadline of ${secs}s and was stopped (cancel, then ${graceMs} ms grace)`,
          retryable: true,
          details: { deadline_at: session.deadline_at },
        },
      };
    }
    case 'cancelled':
      await stopRun();
      return { status: 'cancelled', error: cancelledError(req.signal?.reason) };
  }
}

function noOutput(): ErrorValue {
  return { code: 'runner.no_output', message: 'the runner finished without producing any message', retryable: false, details: {} };
}

/** A cancel that says why (an LbotError `cancelled` as the abort reason, e.g. run_policy interrupt) keeps its reason. */
function cancelledError(reason?: unknown): ErrorValue {
  if (reason instanceof LbotError && reason.code === 'cancelled') return reason.toJSON();
  return { code: 'cancelled', message: 'the run was cancelled', retryable: false, details: {} };
}

function withStderr(error: ErrorValue, conn: PluginConnection): ErrorValue {
  if (error.code !== 'runner.crashed') return error;
  const tail = conn.stderrTail().trim();
  return tail && !error.message.includes(tail) ? { ...error, message: `${error.message}; last stderr lines:\n${tail}` } : error;
}
