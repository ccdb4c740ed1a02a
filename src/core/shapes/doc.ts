// The shapes section of docs/cli.md, rendered from the JSON Schemas (so the doc cannot drift from the code;
// test/unit/core/cli-shapes.test.ts checks it, `node scripts/cli-shapes-doc.mjs` rewrites it).
import { isRecord } from '../json.js';
import { SHAPES, shapeJsonSchema } from './registry.js';

const MAX_DEPTH = 2;

function literal(value: unknown): string {
  return JSON.stringify(value);
}

/** A JSON Schema as a short TypeScript-like type; objects below MAX_DEPTH collapse to `{…}`. */
function typeOf(schema: unknown, depth: number): string {
  if (!isRecord(schema)) return 'unknown';
  if ('const' in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map(literal).join(' | ');
  if (typeof schema.$ref === 'string') return schema.$ref.split('/').at(-1) ?? 'unknown';
  const union = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : null;
  if (union) return [...new Set(union.map((s) => typeOf(s, depth)))].join(' | ');
  const type = schema.type;
  if (Array.isArray(type)) return type.map((t: unknown) => typeOf({ ...schema, type: t }, depth)).join(' | ');
  switch (type) {
    case 'string':
    case 'boolean':
    case 'null':
      return type;
    case 'number':
    case 'integer':
      return 'number';
    case 'array': {
      const item = typeOf(schema.items, depth);
      return item.includes(' | ') ? `(${item})[]` : `${item}[]`;
    }
    case 'object':
      return objectOf(schema, depth);
    default:
      return 'unknown';
  }
}

function objectOf(schema: Record<string, unknown>, depth: number): string {
  const props = isRecord(schema.properties) ? Object.entries(schema.properties) : [];
  const open = schema.additionalProperties !== false;
  if (props.length === 0) {
    const values =
      isRecord(schema.additionalProperties) && Object.keys(schema.additionalProperties).length > 0 ? typeOf(schema.additionalProperties, depth) : 'unknown';
    return `{ [key: string]: ${values} }`;
  }
  if (depth >= MAX_DEPTH) return open ? '{…}' : '{ … }';
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const fields = props.map(([k, v]) => `${k}${required.has(k) ? '' : '?'}: ${typeOf(v, depth + 1)}`);
  if (open) fields.push('…');
  return depth === 0 ? `{\n${fields.map((f) => `  ${f}`).join('\n')}\n}` : `{ ${fields.join(', ')} }`;
}

/** The top-level alternatives of a union shape, one per line. */
function shapeType(schema: Record<string, unknown>): string {
  const union = Array.isArray(schema.anyOf) ? schema.anyOf : null;
  if (!union) return typeOf(schema, 0);
  return union.map((s) => typeOf(s, 0)).join('\n|\n');
}

/** Markdown for every shape: a heading, its description and its fields. */
export function renderShapesDoc(): string {
  const parts = SHAPES.map((shape) => {
    const schema = shapeJsonSchema(shape);
    return [
      `#### \`${shape.name}\` (${shape.kind})`,
      '',
      `${shape.description[0]?.toUpperCase() ?? ''}${shape.description.slice(1)}.`,
      '',
      '```ts',
      shapeType(schema),
      '```',
    ].join('\n');
  });
  return [
    '### Shapes',
    '',
    'Generated from `src/core/shapes/` (`…` marks an object that may carry more keys; `lbot schema NAME` prints the full JSON Schema).',
    '',
    ...parts.flatMap((p) => [p, '']),
  ].join('\n');
}

/** `text` (docs/cli.md) with its shapes section replaced by the rendered one. */
export function withShapesDoc(text: string): string {
  const begin = '<!-- shapes:begin -->';
  const end = '<!-- shapes:end -->';
  const i = text.indexOf(begin);
  const j = text.indexOf(end);
  if (i < 0 || j < i) throw new Error('docs/cli.md has no <!-- shapes:begin --> … <!-- shapes:end --> section');
  return `${text.slice(0, i + begin.length)}\n${renderShapesDoc()}${text.slice(j)}`;
}
