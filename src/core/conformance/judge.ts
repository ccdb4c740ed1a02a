// Shared pieces of the conformance checks: statuses, verdict builders and readers of probe evidence.
import { isRecord } from '../json.js';
import type { Evidence, ProbeRun } from './evidence.js';

export type CheckStatus = 'pass' | 'fail' | 'blocked' | 'n/a';
export type Severity = 'error' | 'warning';

export type CheckResult = { id: string; title: string; severity: Severity; status: CheckStatus; evidence: string };

export type CheckSpec = { id: string; title: string; severity: Severity; judge(e: Evidence): { status: CheckStatus; evidence: string } };

export const pass = (evidence: string) => ({ status: 'pass' as const, evidence });
export const fail = (evidence: string) => ({ status: 'fail' as const, evidence });
export const blocked = (evidence: string) => ({ status: 'blocked' as const, evidence });
export const na = (evidence: string) => ({ status: 'n/a' as const, evidence });

type RunOutcome = Pick<ProbeRun, 'channel' | 'error'>;

/** Runs whose outcome another check already explains (corrupted channel, malformed result, no start). */
export function cutShort(r: RunOutcome): boolean {
  return r.channel?.code === 'runner.protocol_error' || r.error?.code === 'runner.protocol_error' || r.error?.code === 'runner.start_failed';
}

export function crashed(r: RunOutcome): boolean {
  return r.channel?.code === 'runner.crashed' || r.error?.code === 'runner.crashed';
}

export function label(r: { probe: string; runner_id: string }): string {
  return `probe ${r.probe} (${r.runner_id})`;
}

/** The text of a message: its string content, or its text parts joined. */
export function textOf(value: unknown): string | null {
  if (!isRecord(value)) return null;
  if (typeof value.content === 'string') return value.content;
  if (Array.isArray(value.content)) return value.content.map((c) => (isRecord(c) && typeof c.text === 'string' ? c.text : '')).join('');
  return null;
}

export function dataOf(raw: unknown): Record<string, unknown> {
  return isRecord(raw) && isRecord(raw.data) ? raw.data : {};
}

/** Blocked before any run happened: why. */
export function noRuns(e: Evidence): string | null {
  if (e.files.manifestError) return 'the plugin could not be loaded (manifest.valid)';
  if (e.handshake && !e.handshake.ok) return 'the plugin did not start (initialize.handshake)';
  if (e.probesBlocked) return e.probesBlocked;
  if (e.runs.length === 0) return 'no probe run took place';
  return null;
}
