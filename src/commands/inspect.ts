// Store inspection: `runs`, `events`, `transcript`, `artifacts` (acceptance.md §0.5). All support --json.
import type { Command } from 'commander';
import { z } from 'zod';
import { LbotError } from '../core/errors.js';
import { publicArtifact } from '../core/host/api/artifacts.js';
import { parseFlags } from './shared/flags.js';
import { IntFlag, LimitFlag } from './shared/schemas.js';
import { withStores } from './shared/stores.js';
import type { GetContext } from './shared/context.js';
import { ago, localTime, table } from './shared/table.js';
import { eventDetail, eventTable, runDetail, runTable, transcriptLines } from './shared/records.js';
import * as shapes from '../core/shapes/index.js';

// Over 100 lines because it is the command table of `lbot inspect`: one registration per record kind,
// each reading a store and rendering; the logic lives in the stores.
export function registerInspect(program: Command, getCtx: GetContext): void {
  const runs = program.command('runs').description('Inspect run records (status, audit of API calls, observed notices)');
  runs
    .command('list')
    .description('list runs, oldest first')
    .option('--limit <n>', 'at most N runs')
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(z.object({ limit: LimitFlag }), raw);
      const list = await withStores(ctx, (s) => s.runs.list(flags.limit ? { limit: flags.limit } : {}));
      ctx.output.list(shapes.RunRecord, list, runTable);
    });
  runs
    .command('show <run_id>')
    .description('show one run record with its api_calls[] audit and observed[] notices')
    .action(async (runId: string) => {
      const ctx = getCtx();
      const run = await withStores(ctx, (s) => s.runs.get(runId));
      if (!run) throw new LbotError('not_found', `run ${runId} not found`, { hint: 'run `lbot runs list` to see run ids' });
      ctx.output.item(shapes.RunRecord, run, runDetail);
    });

  program
    .command('conversations')
    .description('list conversations with their last activity, the most recently active first')
    .option('--limit <n>', 'at most N conversations (default 50, at most 100)')
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const f = parseFlags(z.object({ limit: LimitFlag }), raw);
      const list = await withStores(ctx, (s) => s.events.conversations(f.limit ?? 50));
      ctx.output.list(shapes.Conversation, list, (l) =>
        l.length
          ? table([
              ['CONVERSATION', 'EVENTS', 'LAST ACTIVITY', '', 'LAST EVENT', 'FROM', 'RUN'],
              ...l.map((c) => [
                c.conversation_id,
                String(c.events),
                localTime(c.last_at),
                ago(c.last_at),
                c.last_event_type,
                c.last_actor_name ?? c.last_actor_id ?? '-',
                c.last_run_id ?? '-',
              ]),
            ])
          : 'no conversations',
      );
    });

  const events = program.command('events').description('Inspect the event log');
  events
    .command('list')
    .description('list event-log records, newest first (at most 100 per page; the next page: --before the last seq)')
    .option('--conversation <id>', 'only this conversation')
    .option('--type <event_type>', 'only this event type')
    .option('--limit <n>', 'page size (capped at 100)')
    .option('--before <seq>', "records before this seq (the previous page's next_seq)")
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const f = parseFlags(z.object({ conversation: z.string().optional(), type: z.string().optional(), limit: LimitFlag, before: IntFlag.optional() }), raw);
      const page = await withStores(ctx, (s) =>
        s.events.page({
          ...(f.conversation ? { conversation_id: f.conversation } : {}),
          event_types: f.type ? [f.type] : null,
          before_seq: f.before ?? null,
          limit: f.limit ?? 50,
        }),
      );
      ctx.output.list(shapes.EventRecord, page.items, eventTable);
      if (page.has_more && page.next_seq !== null) ctx.output.notice(`more: --before ${page.next_seq}`);
    });
  events
    .command('get <event_id>')
    .description('show one event-log record (the newest with this id)')
    .action(async (eventId: string) => {
      const ctx = getCtx();
      const [record] = await withStores(ctx, (s) => s.events.findByEventId(eventId));
      if (!record) throw new LbotError('not_found', `event ${eventId} not found`);
      ctx.output.item(shapes.EventRecord, record, eventDetail);
    });

  program
    .command('transcript')
    .description('Inspect conversation transcripts')
    .command('page')
    .description('one page of a conversation transcript, oldest first; --before the first seq pages further back')
    .requiredOption('--conversation <id>', 'conversation id')
    .option('--before <seq>', 'items before this seq, newest first')
    .option('--after <seq>', 'items after this seq, oldest first')
    .option('--limit <n>', 'page size (capped at 100)')
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const f = parseFlags(z.object({ conversation: z.string().min(1), before: IntFlag.optional(), after: IntFlag.optional(), limit: LimitFlag }), raw);
      const direction = f.after !== undefined ? 'forward' : 'backward';
      const stored = await withStores(ctx, (s) =>
        s.transcript.page({
          conversation_id: f.conversation,
          before_seq: f.before ?? null,
          after_seq: f.after ?? null,
          limit: f.limit ?? 50,
          direction,
          include_artifacts: true,
        }),
      );
      // A person reads a conversation oldest first; the cursors keep their store meaning (AC-001, AC-043).
      const items = direction === 'backward' ? [...stored.items].reverse() : stored.items;
      ctx.output.list(shapes.TranscriptItem, items, transcriptLines);
      if (stored.has_more && stored.next_seq !== null) ctx.output.notice(`more: --${direction === 'backward' ? 'before' : 'after'} ${stored.next_seq}`);
    });

  const artifacts = program.command('artifacts').description('Inspect artifacts (metadata and bytes)');
  artifacts
    .command('list')
    .description('list artifacts')
    .option('--run <run_id>', 'only artifacts of this run')
    .option('--limit <n>', 'at most N')
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const f = parseFlags(z.object({ run: z.string().optional(), limit: LimitFlag }), raw);
      const list = await withStores(ctx, (s) => s.artifacts.list({ ...(f.run ? { run_id: f.run } : {}), ...(f.limit ? { limit: f.limit } : {}) }));
      const rows = list.map((r) => ({
        ...publicArtifact(r),
        storage_type: r.storage_type,
        reference: r.storage_type === 'binary_storage' ? null : r.storage_key,
      }));
      ctx.output.list(shapes.Artifact, rows, (l) =>
        l.length
          ? table([
              ['ARTIFACT', 'TYPE', 'MIME', 'SIZE', 'SOURCE', 'STORED', 'CREATED'],
              ...l.map((a) => [
                a.artifact_id,
                a.artifact_type,
                a.mime_type ?? '-',
                String(a.size_bytes ?? '-'),
                a.source,
                a.storage_type,
                localTime(a.created_at ?? null),
              ]),
            ])
          : 'no artifacts',
      );
    });
  artifacts
    .command('show <artifact_id>')
    .description('show the metadata of one artifact')
    .action(async (id: string) => {
      const ctx = getCtx();
      const r = await withStores(ctx, (s) => s.artifacts.get(id));
      if (!r) throw new LbotError('not_found', `artifact ${id} not found`);
      ctx.output.item(shapes.Artifact, {
        ...publicArtifact(r),
        storage_type: r.storage_type,
        reference: r.storage_type === 'binary_storage' ? null : r.storage_key,
      });
    });
  artifacts
    .command('read <artifact_id>')
    .description('write artifact bytes to stdout (--json: base64 with offset/length/has_more)')
    .option('--offset <n>', 'start at this byte', '0')
    .option('--length <n>', 'at most N bytes (default 1 MiB, max 10 MiB)')
    .action(async (id: string, raw: unknown) => {
      const ctx = getCtx();
      const f = parseFlags(z.object({ offset: IntFlag.min(0, 'must be >= 0'), length: LimitFlag }), raw);
      const result = await withStores(ctx, async (s) => {
        const r = await s.artifacts.get(id);
        if (!r) throw new LbotError('not_found', `artifact ${id} not found`);
        return s.artifacts.read(r, f.offset, f.length ?? null);
      });
      if (ctx.output.json) return ctx.output.item(shapes.ArtifactBytes, result);
      if (result.content_base64 === null) return ctx.output.text(`reference: ${result.file_key ?? '(none)'} (no stored bytes)`);
      await ctx.output.bytes(Buffer.from(result.content_base64, 'base64'));
    });
}
