// GET /v1/schedules (with their last ticks) and POST /v1/schedules/:name/run (`lbot schedule run-now`).
import type { FastifyInstance } from 'fastify';
import { LbotError } from '../../core/errors.js';
import { tickEnvelope } from '../../core/schedules/schedule.js';
import { startEventRun, type EventRouterDeps } from './event-router.js';

export function registerScheduleRoutes(app: FastifyInstance, deps: EventRouterDeps): void {
  app.get('/v1/schedules', async () => ({
    items: deps.config().schedules.map((s) => ({ ...s, ticks: deps.stores.delivery.ticks(s.name, 10) })),
  }));
  app.post<{ Params: { name: string } }>('/v1/schedules/:name/run', async (req, reply) => {
    const s = deps.config().schedules.find((x) => x.name === req.params.name);
    if (!s) throw new LbotError('not_found', `schedule ${req.params.name} not found`, { hint: 'lbot schedule list shows the schedules' });
    // A run-now event has its own id: it is not one of the schedule's ticks and does not replace one.
    const run_id = await startEventRun(deps, tickEnvelope(s, Date.now(), 'run_now'));
    return reply.code(202).send({ run_id });
  });
}
