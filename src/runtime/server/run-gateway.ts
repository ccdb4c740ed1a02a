// What the HTTP routes ask of whatever runs a server's runs: the in-process RunManager (the embedded default)
// or the QueueDispatcher of `serve --queue`, which hands runs to `lbot worker` processes (docs/scale.md).
import type { EventEmitter } from 'node:events';
import type { RunOutcome, RunRequest } from '../../core/host/host.js';
import type { QueuedRunView, StreamItem } from './run-manager.js';

export type StartRequest = Omit<RunRequest, 'signal' | 'onStarted' | 'onDelivered' | 'onObserved' | 'run_id'>;

export type RunGateway = {
  /** Admits a run under its binding's run_policy and resolves with its id (or rejects: busy, full, pre-run error). */
  start(req: StartRequest): Promise<string>;
  /** The live result stream of a run running in this process; undefined for any other run. */
  get(run_id: string): { items: readonly StreamItem[]; events: EventEmitter } | undefined;
  /** A run accepted but not recorded yet (waiting its turn, or being set up), as GET /v1/runs/:id shows it. */
  queued(run_id: string): QueuedRunView | undefined | Promise<QueuedRunView | undefined>;
  /** The outcome of a run this gateway admitted, once it ends; undefined when it knows no such run in flight. */
  outcome(run_id: string): Promise<RunOutcome> | undefined;
  /** Cancels a queued or running run; false when it is neither. */
  cancel(run_id: string): boolean | Promise<boolean>;
  /** Resolves when the record of `run_id` may have changed (a result, its end), or after `timeoutMs`. */
  changed(run_id: string, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
};
