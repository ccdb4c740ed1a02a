// `lbot schema [NAME]`: the names of the --json shapes, or the JSON Schema of one (docs/cli.md, "JSON output").
import type { Command } from 'commander';
import { closestName } from '../core/closest-name.js';
import { LbotError } from '../core/errors.js';
import * as shapes from '../core/shapes/index.js';
import { SHAPES, shapeJsonSchema, shapeNamed } from '../core/shapes/registry.js';
import { tolerateBrokenConfig } from './shared/broken-config.js';
import type { GetContext } from './shared/context.js';
import { table } from './shared/table.js';

export function registerSchema(program: Command, getCtx: GetContext): void {
  const cmd = program
    .command('schema')
    .description('list the shapes of --json output, or print the JSON Schema of one')
    .argument('[name]', 'a shape name (see `lbot schema`)')
    .action((name: string | undefined) => {
      const ctx = getCtx();
      if (name === undefined) {
        const list = SHAPES.map((s) => ({ name: s.name, kind: s.kind, description: s.description }));
        ctx.output.list(shapes.ShapeInfo, list, (l) => table([['SHAPE', 'KIND', 'DESCRIPTION'], ...l.map((s) => [s.name, s.kind, s.description])]));
        return;
      }
      const shape = shapeNamed(name);
      if (!shape) {
        const near = closestName(
          name,
          SHAPES.map((s) => s.name),
        );
        throw new LbotError('not_found', `no shape named ${JSON.stringify(name)}`, {
          details: { name },
          hint: near ? `did you mean ${near}? (lbot schema lists them)` : 'lbot schema lists the shape names',
        });
      }
      ctx.output.item(shapes.JsonSchema, { title: shape.name, description: shape.description, ...shapeJsonSchema(shape) }, (s) => JSON.stringify(s, null, 2));
    });
  tolerateBrokenConfig(cmd);
}
