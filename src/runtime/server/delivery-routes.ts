// GET /v1/outbox and POST /v1/outbox/:id/retry: the outbox of platform replies over HTTP.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { LbotError } from '../../core/errors.js';
import { outboxListOptions, OutboxQuerySchema, publicOutboxRow } from '../../core/delivery/outbox-view.js';
import type { DeliveryStore } from '../../core/stores/delivery-types.js';
import { parseOrThrow } from '../../core/zod-issue.js';

const IdParamsSchema = z.object({ id: z.coerce.number().int().positive() });
const parse = <S extends z.ZodType>(schema: S, value: unknown): z.output<S> => parseOrThrow(schema, value, 'query', '');

export function registerDeliveryRoutes(app: FastifyInstance, store: DeliveryStore): void {
  app.get('/v1/outbox', async (req) => ({ items: store.list(outboxListOptions(parse(OutboxQuerySchema, req.query))).map(publicOutboxRow) }));
  app.post<{ Params: { id: string } }>('/v1/outbox/:id/retry', async (req) => {
    const { id } = parse(IdParamsSchema, req.params);
    const row = store.get(id);
    if (!row) throw new LbotError('not_found', `outbox message ${id} not found`);
    if (!store.retry(id, Date.now() / 1000)) throw new LbotError('invalid_argument', `outbox message ${id} is ${row.status}; only failed messages are retried`);
    const after = store.get(id);
    return after ? publicOutboxRow(after) : null;
  });
}
