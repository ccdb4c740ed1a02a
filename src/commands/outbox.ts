// `lbot outbox list|retry`: platform replies recorded before sending, and their delivery.
import type { Command } from 'commander';
import { z } from 'zod';
import { LbotError } from '../core/errors.js';
import { outboxLine, outboxListOptions, OutboxQuerySchema, publicOutboxRow } from '../core/delivery/outbox-view.js';
import { parseFlags } from './shared/flags.js';
import { withStores } from './shared/stores.js';
import type { GetContext } from './shared/context.js';
import * as shapes from '../core/shapes/index.js';

export function registerOutbox(program: Command, getCtx: GetContext): void {
  const outbox = program.command('outbox').description('Platform replies: what was sent, what waits for a retry, what failed');
  outbox
    .command('list')
    .description('list outbox messages, newest first')
    .option('--status <status>', 'pending|sending|delivered|failed')
    .option('--run <run_id>', 'only the messages of this run')
    .option('--limit <n>', 'at most this many (default 50)')
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const q = parseFlags(OutboxQuerySchema, raw);
      const rows = (await withStores(ctx, (s) => s.delivery.list(outboxListOptions(q)))).map(publicOutboxRow);
      ctx.output.list(shapes.OutboxMessage, rows, (l) => l.map(outboxLine).join('\n') || 'the outbox is empty');
    });
  outbox
    .command('retry <id>')
    .description('send a failed message again (a running lbot serve picks it up within a second)')
    .action(async (id: string) => {
      const ctx = getCtx();
      const n = parseFlags(z.object({ id: z.coerce.number().int().positive() }), { id }).id;
      const row = await withStores(ctx, (s) => {
        const existing = s.delivery.get(n);
        if (!existing) throw new LbotError('not_found', `outbox message ${n} not found`, { hint: 'lbot outbox list shows the messages' });
        if (!s.delivery.retry(n, Date.now() / 1000))
          throw new LbotError('invalid_argument', `outbox message ${n} is ${existing.status}; only failed messages are retried`);
        const after = s.delivery.get(n);
        return after ? publicOutboxRow(after) : null;
      });
      if (!row) throw new LbotError('not_found', `outbox message ${n} not found`);
      ctx.output.item(shapes.OutboxMessage, row, (r) => `queued ${outboxLine(r)}`);
    });
}
