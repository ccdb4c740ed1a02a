// Shapes every command group shares: the error envelope and the answer of a removal.
import { z } from 'zod';
import { ErrorValueSchema } from '../protocol/error-value.js';
import { defineShape } from './shape.js';

export const ErrorEnvelope = defineShape(
  'ErrorEnvelope',
  'item',
  'what stdout gets with --json when a command fails (stderr has the `lbot: error[code]` line)',
  z.strictObject({ ok: z.literal(false), error: ErrorValueSchema }),
);

export const Removed = defineShape(
  'Removed',
  'item',
  'the answer of a removal (`binding rm`, `platform rm`, `schedule rm`, …): what was removed',
  z.strictObject({ ok: z.literal(true), removed: z.string() }),
);

export const DoctorReport = defineShape(
  'DoctorReport',
  'item',
  'the checks of `lbot doctor` and the box backends it probed; `ok` is false when a check failed (exit 1)',
  z.strictObject({
    ok: z.boolean(),
    checks: z.array(z.strictObject({ name: z.string(), status: z.enum(['ok', 'warn', 'fail']), detail: z.string() })),
    box: z.strictObject({
      enabled: z.boolean(),
      configured_backend: z.string(),
      selected_backend: z.string().nullable(),
      error: z.string().optional(),
      backends: z.array(z.looseObject({ name: z.string(), available: z.boolean(), isolating: z.boolean() })),
    }),
  }),
);

export const ShapeInfo = defineShape(
  'ShapeInfo',
  'item',
  'a named shape of --json output (`lbot schema`)',
  z.strictObject({ name: z.string(), kind: z.enum(['item', 'stream']), description: z.string() }),
);

export const JsonSchema = defineShape(
  'JsonSchema',
  'item',
  'the JSON Schema (draft 2020-12) of one shape (`lbot schema NAME`)',
  z.looseObject({ title: z.string(), description: z.string() }),
);
