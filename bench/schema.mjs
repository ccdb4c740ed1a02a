// The shape of what the benches report: one bench's report line (read back by run.js, which refuses a line that
// does not match) and the document `npm run bench -- --json` writes. Validated in test/unit/bench/.
import { z } from 'zod';

const num = z.number().finite();
const level = z.enum(['required', 'stretch']);
const kind = z.enum(['value', 'ratio', 'share', 'speedup']);
const op = z.enum(['<=', '>=']);
const text = z.string().max(2000);

export const TargetSchema = z.strictObject({ level, of: kind, op, limit: num, actual: num.nullable(), met: z.boolean().nullable() });

export const FigureSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[a-z0-9_.-]+$/)
    .max(100),
  label: text,
  unit: z.string().min(1).max(40),
  value: num.nullable(),
  baseline: num.nullable(),
  baseline_label: text.nullable(),
  ratio: num.nullable(),
  targets: z.array(TargetSchema).max(2),
  met: z.boolean().nullable(),
  unavailable: text.nullable(),
  note: text.nullable(),
});

/** The last stdout line of a bench script. `detail` is the bench's own figures in its own shape. */
export const BenchReportSchema = z.strictObject({
  bench: z
    .string()
    .regex(/^[a-z0-9_-]+$/)
    .max(60),
  figures: z.array(FigureSchema).max(200),
  skipped: text.optional(),
  detail: z.record(z.string(), z.unknown()),
});

const SpreadSchema = z.strictObject({ median: num, min: num, max: num });

export const FigureSummarySchema = z.strictObject({
  name: FigureSchema.shape.name,
  label: text,
  unit: FigureSchema.shape.unit,
  baseline_label: text.nullable(),
  reported: z.number().int().nonnegative(),
  value: SpreadSchema.nullable(),
  baseline: SpreadSchema.nullable(),
  ratio: SpreadSchema.nullable(),
  targets: z.array(
    z.strictObject({
      level,
      of: kind,
      op,
      limit: num,
      actual: SpreadSchema.nullable(),
      met_runs: z.number().int().nonnegative(),
      runs: z.number().int().positive(),
      met_every_run: z.boolean(),
      median_met: z.boolean().nullable(),
    }),
  ),
  met_every_run: z.boolean().nullable(),
  unavailable: text.nullable(),
});

export const MachineSchema = z.strictObject({
  at: z.iso.datetime(),
  loadavg: z.tuple([num, num, num]),
  cores: z.number().int().positive(),
  cpu_model: text,
  node: text,
  platform: text,
  arch: text,
  total_mem_mb: num,
  free_mem_mb: num,
});

export const RunSchema = z.strictObject({
  run: z.number().int().positive(),
  ok: z.boolean(),
  /** os.loadavg() as the run started. */
  loadavg: z.tuple([num, num, num]),
  exit_code: z.number().int().nullable(),
  signal: z.string().nullable(),
  duration_s: num,
  error: text.nullable(),
  report: BenchReportSchema.nullable(),
});

export const BenchDocumentSchema = z.strictObject({
  schema: z.literal('lbot.bench/v1'),
  started_at: z.iso.datetime(),
  finished_at: z.iso.datetime(),
  command: z.strictObject({ benches: z.array(z.string()), repeat: z.number().int().positive(), strict: z.boolean() }),
  machine: z.strictObject({ start: MachineSchema, end: MachineSchema }),
  benches: z.array(
    z.strictObject({
      bench: z.string(),
      script: z.string(),
      skipped: text.nullable(),
      runs: z.array(RunSchema).min(1),
      summary: z.array(FigureSummarySchema),
    }),
  ),
  totals: z.strictObject({
    benches: z.number().int().nonnegative(),
    failed: z.array(z.string()),
    skipped: z.array(z.string()),
    required: z.number().int().nonnegative(),
    required_met_every_run: z.number().int().nonnegative(),
    missed_required: z.array(z.string()),
    unmeasured_required: z.array(z.string()),
  }),
  exit_code: z.number().int().min(0).max(1),
});
