// Shapes of what the config-file commands print: bindings, schedules, platform accounts, the outbox.
import { z } from 'zod';
import { DELIVERY_PLATFORMS } from '../delivery/accounts.js';
import { BindingSchema } from '../protocol/binding.js';
import { JsonObjectSchema } from '../protocol/event.js';
import { ScheduleSchema } from '../schedules/schedule.js';
import { defineShape } from './shape.js';

export const Binding = defineShape('Binding', 'item', 'a binding with its defaults filled in', BindingSchema);

export const Schedule = defineShape(
  'Schedule',
  'item',
  'a schedule and its next tick (ISO 8601, UTC)',
  ScheduleSchema.extend({ next_tick: z.string().nullable() }),
);

export const RunStarted = defineShape(
  'RunStarted',
  'item',
  'a run that a running lbot serve started (`schedule run-now`)',
  z.strictObject({ run_id: z.string() }),
);

export const PlatformAccount = defineShape(
  'PlatformAccount',
  'item',
  'a platform account replies are sent with; the token is never shown (`****` when its env variable is set)',
  z.strictObject({
    name: z.string(),
    platform: z.enum(DELIVERY_PLATFORMS),
    bot_id: z.string(),
    api_base: z.string().nullable(),
    token_env: z.string().nullable(),
    token: z.string().nullable().describe('`****` when the env variable is set, `(not set)` when not, null without one'),
    app_id: z.string().optional(),
  }),
);

export const OutboxMessage = defineShape(
  'OutboxMessage',
  'item',
  'a platform reply recorded before sending, and its delivery',
  z.strictObject({
    id: z.number().int(),
    idempotency_key: z.string(),
    account: z.string(),
    platform: z.string(),
    op: z.enum(['send', 'edit']),
    run_id: z.string().nullable(),
    event_id: z.string().nullable(),
    conversation_id: z.string().nullable(),
    target: JsonObjectSchema,
    text: z.string(),
    edits_key: z.string().nullable(),
    status: z.enum(['pending', 'sending', 'delivered', 'failed']),
    attempts: z.number().int(),
    next_attempt_at: z.number(),
    owner: z.strictObject({ pid: z.number(), host: z.string() }).nullable(),
    platform_message_id: z.string().nullable(),
    edits_message_id: z.string().nullable(),
    error: z.strictObject({ code: z.string(), message: z.string(), status: z.number().nullable(), retry_after_s: z.number().nullable() }).nullable(),
    created_at: z.number(),
    updated_at: z.number(),
  }),
);

export const Config = defineShape(
  'Config',
  'item',
  'the effective config (file, env overrides, defaults); every value under a secret-looking key is `****`',
  z.record(z.string(), z.unknown()),
);

export const ConfigValue = defineShape(
  'ConfigValue',
  'item',
  'the effective value of one dotted key and where it comes from (`config get`)',
  z.strictObject({ key: z.string(), value: z.unknown(), source: z.enum(['file', 'env', 'default']) }),
);

export const ConfigChange = defineShape(
  'ConfigChange',
  'item',
  'a change to the config file: `config set` (the new `value`, masked), `config unset` (`removed`), `config edit` (`changed`)',
  z.strictObject({
    file: z.string(),
    key: z.string().optional(),
    value: z.unknown().optional(),
    removed: z.boolean().optional(),
    changed: z.boolean().optional(),
  }),
);
