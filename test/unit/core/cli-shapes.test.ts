// The --json shapes: one registry, a JSON Schema for each, the docs section generated from them, and the
// reporter printing lists as one array (NDJSON under --jsonl) and refusing a value that breaks its shape.
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createOutput } from '../../../src/commands/shared/output.js';
import { storedDeliveredLine } from '../../../src/core/protocol/result-line.js';
import { withShapesDoc } from '../../../src/core/shapes/doc.js';
import * as shapes from '../../../src/core/shapes/index.js';
import { SHAPES, shapeJsonSchema, shapeNamed } from '../../../src/core/shapes/registry.js';

const CLI_MD = fileURLToPath(new URL('../../../docs/cli.md', import.meta.url));

function capture(opts: { json: boolean; jsonl?: boolean; checkShapes?: boolean }) {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  out.on('data', (d: Buffer) => (stdout += d.toString()));
  const output = createOutput({ verbose: false, debug: false, ...opts }, { out, err });
  return { output, stdout: () => stdout };
}

describe('--json shapes', () => {
  it('every shape has a unique name and a JSON Schema', () => {
    expect(new Set(SHAPES.map((s) => s.name)).size).toBe(SHAPES.length);
    for (const s of SHAPES) {
      const schema = shapeJsonSchema(s);
      expect(schema, s.name).toMatchObject({ title: s.name, $schema: 'https://json-schema.org/draft/2020-12/schema' });
    }
    expect(shapeNamed('RunRecord')).toBe(shapes.RunRecord);
    expect(shapeNamed('nope')).toBeUndefined();
  });

  it('docs/cli.md shows every shape as generated from the schemas (run `node scripts/cli-shapes-doc.mjs` after a build)', () => {
    const text = readFileSync(CLI_MD, 'utf8');
    expect(text).toBe(withShapesDoc(text));
    for (const s of SHAPES) expect(text).toContain(`#### \`${s.name}\``);
  });

  it('a list is one JSON array, one item a line under --jsonl, and [] when empty', () => {
    const items = [
      { ok: true as const, removed: 'a' },
      { ok: true as const, removed: 'b' },
    ];
    const json = capture({ json: true });
    json.output.list(shapes.Removed, items, () => 'text');
    expect(json.stdout()).toBe(`${JSON.stringify(items)}\n`);
    const empty = capture({ json: true });
    empty.output.list(shapes.Removed, [], () => 'none');
    expect(empty.stdout()).toBe('[]\n');
    const lines = capture({ json: false, jsonl: true });
    lines.output.list(shapes.Removed, items, () => 'text');
    expect(lines.stdout()).toBe(items.map((i) => `${JSON.stringify(i)}\n`).join(''));
    const text = capture({ json: false });
    text.output.list(shapes.Removed, items, (l) => l.map((i) => i.removed).join(','));
    expect(text.stdout()).toBe('a,b\n');
  });

  it('with checkShapes a value that breaks its shape is an internal error, not output', () => {
    const c = capture({ json: true, checkShapes: true });
    const bad = { ok: true as const, removed: 'a', extra: 1 };
    expect(() => c.output.item(shapes.Removed, bad)).toThrow(/does not match shape Removed: \(root\)/);
    expect(c.stdout()).toBe('');
  });

  it('stored results read back as StreamItem lines, including records written before they were lines', () => {
    const message = { role: 'assistant', content: 'hi' };
    const line = { type: 'message.completed', run_id: 'r1', data: { message } };
    expect(storedDeliveredLine(line)).toEqual(line);
    expect(storedDeliveredLine({ type: 'message.completed', run_id: 'r1', message })).toEqual(line);
    expect(storedDeliveredLine({ type: 'message.delta', run_id: 'r1', chunk: { role: 'assistant', content: 'h' } })).toMatchObject({
      type: 'message.delta',
      data: { chunk: { content: 'h' } },
    });
    expect(storedDeliveredLine({ type: 'run.completed', run_id: 'r1', data: {} })).toBeNull();
    for (const l of [line]) expect(shapes.StreamItem.schema.safeParse(l).success).toBe(true);
  });
});
