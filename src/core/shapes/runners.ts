// Shapes of the runner commands: descriptors, the conformance report, a scaffolded plugin.
import { z } from 'zod';
import { RunnerDescriptorSchema } from '../protocol/manifest.js';
import { defineShape } from './shape.js';

export const Runner = defineShape(
  'Runner',
  'item',
  'a runner descriptor (`runner list`); `reload_error` is the last failed reload of a live lbot dev on the same plugins',
  RunnerDescriptorSchema.extend({ reload_error: z.string().nullable() }),
);

export const RunnerDetail = defineShape(
  'RunnerDetail',
  'item',
  'a runner descriptor and what its plugin process is granted (`runner show`)',
  RunnerDescriptorSchema.extend({ granted: z.record(z.string(), z.unknown()) }),
);

export const ConformanceReport = defineShape(
  'ConformanceReport',
  'item',
  'the conformance suite of `runner test`: named checks with status and evidence',
  z.strictObject({
    plugin_dir: z.string(),
    plugin: z.string().nullable(),
    strict: z.boolean(),
    ok: z.boolean(),
    counts: z.strictObject({ pass: z.number().int(), fail: z.number().int(), warn: z.number().int(), blocked: z.number().int(), na: z.number().int() }),
    checks: z.array(
      z.strictObject({
        id: z.string(),
        title: z.string(),
        severity: z.enum(['error', 'warning']),
        status: z.enum(['pass', 'fail', 'blocked', 'n/a']),
        evidence: z.string(),
      }),
    ),
    duration_ms: z.number(),
  }),
);

export const ScaffoldedRunner = defineShape(
  'ScaffoldedRunner',
  'item',
  'the plugin `runner init` wrote',
  z.strictObject({ dir: z.string(), runner_id: z.string(), files: z.array(z.string()), linked: z.array(z.string()) }),
);
