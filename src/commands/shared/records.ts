// How a person reads store records without --json: tables and detail blocks in local time, with durations.
import type { z } from 'zod';
import type { EventRecordSchema, TranscriptItemSchema } from '../../core/protocol/proxy-results.js';
import type { RunRecordSchema } from '../../core/shapes/stores.js';
import { fields, indent, localTime, table } from './table.js';

type RunRecord = z.input<typeof RunRecordSchema>;
type EventRecord = z.input<typeof EventRecordSchema>;
type TranscriptItem = z.input<typeof TranscriptItemSchema>;

/** `850ms`, `12.3s`, `4m 05s`, `2h 03m`; `running` when the end is not known yet. */
export function duration(startS: number, endS: number | null): string {
  if (endS === null) return 'running';
  const ms = Math.max(0, Math.round((endS - startS) * 1000));
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
}

const statusOf = (r: RunRecord) => r.status + (r.error ? ` (${r.error.code})` : '');

export function runTable(list: readonly RunRecord[]): string {
  if (list.length === 0) return 'no runs';
  return table([
    ['RUN', 'RUNNER', 'EVENT', 'STATUS', 'STARTED', 'DURATION'],
    ...list.map((r) => [r.run_id, r.runner_id, r.event_id, statusOf(r), localTime(r.started_at), duration(r.started_at, r.ended_at ?? null)]),
  ]);
}

/** Labelled fields, then the audit and the delivered messages: what `runs show` answers at a glance. */
export function runDetail(r: RunRecord): string {
  const out = [
    fields([
      ['run', r.run_id],
      ['runner', r.runner_id],
      ['binding', r.binding_id],
      ['event', r.event_id],
      ['conversation', r.conversation_id ?? '-'],
      ['status', statusOf(r)],
      ['started', localTime(r.started_at)],
      ['ended', localTime(r.ended_at ?? null)],
      ['duration', duration(r.started_at, r.ended_at ?? null)],
    ]),
  ];
  if (r.error) out.push('', `error: ${r.error.message}`);
  if (r.api_calls.length) {
    out.push('', `api calls (${r.api_calls.length}):`);
    out.push(indent(table(r.api_calls.map((c) => [localTime(c.at), c.action, c.resource ?? '-', c.decision + (c.code ? ` (${c.code})` : '')]))));
  }
  const messages = r.results.filter((l) => l.type === 'message.completed');
  if (messages.length) {
    out.push('', 'messages:');
    for (const m of messages) {
      const content = m.data.message.content;
      out.push(indent(typeof content === 'string' ? content : JSON.stringify(content ?? null)));
    }
  }
  if (r.observed.length) out.push('', `observed notices: ${r.observed.map((o) => o.type).join(', ')}`);
  for (const w of r.warnings) out.push(`warning: ${w}`);
  if (r.stderr_tail) out.push('', 'stderr (last lines):', indent(r.stderr_tail.trimEnd()));
  return out.join('\n');
}

export function eventTable(items: readonly EventRecord[]): string {
  if (items.length === 0) return 'no events';
  return table([
    ['SEQ', 'TIME', 'EVENT', 'TYPE', 'CONVERSATION', 'ACTOR', 'RUN'],
    ...items.map((e) => [
      String(e.seq),
      localTime(e.created_at ?? e.event_time ?? null),
      e.event_id,
      e.event_type,
      e.conversation_id ?? '-',
      e.actor_name ?? e.actor_id ?? '-',
      e.run_id ?? '-',
    ]),
  ]);
}

export function eventDetail(e: EventRecord): string {
  const out = [
    fields([
      ['event', e.event_id],
      ['type', e.event_type],
      ['seq', String(e.seq)],
      ['source', e.source],
      ['received', localTime(e.created_at ?? null)],
      ['bot', e.bot_id ?? '-'],
      ['conversation', e.conversation_id ?? '-'],
      ['thread', e.thread_id ?? '-'],
      ['actor', e.actor_id ? `${e.actor_name ?? e.actor_id} (${e.actor_type ?? 'actor'} ${e.actor_id})` : '-'],
      ['run', e.run_id ?? '-'],
      ['runner', e.runner_id ?? '-'],
    ]),
  ];
  if (e.input_json) out.push('', 'input:', indent(JSON.stringify(e.input_json, null, 2)));
  else if (e.input_summary) out.push('', `input: ${e.input_summary}`);
  return out.join('\n');
}

/** `[seq] 15:04:05 role: content`, oldest first as given. */
export function transcriptLines(items: readonly TranscriptItem[]): string {
  if (items.length === 0) return 'no items';
  return items
    .map((i) => {
      const at = i.created_at === null || i.created_at === undefined ? '' : `${localTime(i.created_at).slice(11)} `;
      return `[${i.seq ?? '-'}] ${at}${i.role}: ${i.content ?? (i.content_json ? JSON.stringify(i.content_json) : '')}`;
    })
    .join('\n');
}
