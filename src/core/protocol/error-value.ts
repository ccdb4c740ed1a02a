// The one shape of an error as a value: `--json` output, run records, result-stream summaries and
// HTTP error bodies all carry it (acceptance.md §0.3). Runner-reported codes pass through, so the
// code is any string here; lbot's own codes are the rows of core/error-table.ts.
import { z } from 'zod';
import { JsonObjectSchema } from './event.js';

export const ErrorValueSchema = z.object({ code: z.string(), message: z.string(), retryable: z.boolean(), details: JsonObjectSchema });
export type ErrorValue = z.infer<typeof ErrorValueSchema>;
