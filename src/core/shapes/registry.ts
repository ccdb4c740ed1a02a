// The shapes by name, for `lbot schema` and the generated section of docs/cli.md.
import { z } from 'zod';
import * as all from './index.js';
import type { Shape } from './shape.js';

function isShape(value: unknown): value is Shape {
  return typeof value === 'object' && value !== null && 'name' in value && 'schema' in value && value.schema instanceof z.ZodType;
}

/** Every shape, sorted by name. */
export const SHAPES: readonly Shape[] = Object.values(all)
  .filter(isShape)
  .sort((a, b) => a.name.localeCompare(b.name));

export function shapeNamed(name: string): Shape | undefined {
  return SHAPES.find((s) => s.name === name);
}

/** The JSON Schema (draft 2020-12) of what lbot prints for a shape. */
export function shapeJsonSchema(shape: Shape): Record<string, unknown> {
  return { title: shape.name, description: shape.description, ...z.toJSONSchema(shape.schema, { io: 'output', unrepresentable: 'any' }) };
}
