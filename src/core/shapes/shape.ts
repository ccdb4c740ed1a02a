// A named shape of `--json` output: the zod schema of one item, and how a command prints it (docs/cli.md).
import type { z } from 'zod';

/**
 * `item`: an object a command prints alone, or as the elements of the one JSON array of a list command
 * (one element a line under `--jsonl`). `stream`: NDJSON lines, one each, written as they happen.
 */
export type ShapeKind = 'item' | 'stream';

export type Shape<S extends z.ZodType = z.ZodType> = {
  readonly name: string;
  readonly kind: ShapeKind;
  readonly description: string;
  readonly schema: S;
};

export function defineShape<S extends z.ZodType>(name: string, kind: ShapeKind, description: string, schema: S): Shape<S> {
  return { name, kind, description, schema };
}
