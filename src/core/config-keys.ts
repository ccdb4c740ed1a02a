// Dotted config keys (`box.limits.memory_mb`, `mcp.servers.fs.url`) for `lbot config get|set|unset`: each
// key is checked against the config schema before anything is read or written, so a typo names the keys
// that exist instead of writing a value lbot would never read.
import { z } from 'zod';
import { closestName } from './closest-name.js';
import { ConfigSchema } from './config.js';
import { LbotError } from './errors.js';
import { isRecord } from './json.js';

/** One step of a key: an object field, or an element of a list chosen by index or by its `name`/`id`. */
export type KeyStep = { kind: 'field'; name: string } | { kind: 'element'; selector: string };

type Schema = z.core.$ZodType;

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

/** The schema under the wrappers that do not change a value's shape. */
function bare(schema: Schema): Schema {
  let s: Schema = schema;
  for (;;) {
    if (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault || s instanceof z.ZodPrefault) s = s.unwrap();
    else if (s instanceof z.ZodPipe) s = s.in;
    else return s;
  }
}

function unknownKey(key: string, at: string, name: string, known: string[]): LbotError {
  const near = closestName(name, known);
  const prefix = at === '' ? '' : `${at}.`;
  return new LbotError('invalid_argument', `unknown config key '${key}': ${prefix}${name} is not a setting`, {
    hint: `${near ? `did you mean ${prefix}${near}? ` : ''}keys${at === '' ? '' : ` under ${at}`}: ${known.join(', ')}`,
    details: { key, known },
  });
}

/** Splits and checks a dotted key against the schema; the schema of the value it names comes with it. */
export function resolveKey(key: string): { steps: KeyStep[]; schema: Schema } {
  const names = key.split('.');
  if (key === '' || names.some((n) => n === '' || FORBIDDEN.has(n))) {
    throw new LbotError('invalid_argument', `'${key}' is not a config key`, { hint: 'keys are dotted names such as box.limits.memory_mb' });
  }
  const steps: KeyStep[] = [];
  let schema: Schema = ConfigSchema;
  for (const [i, name] of names.entries()) {
    const at = names.slice(0, i).join('.');
    const s = bare(schema);
    if (s instanceof z.ZodObject) {
      const shape: Readonly<Record<string, Schema>> = s._zod.def.shape;
      const field = Object.hasOwn(shape, name) ? shape[name] : undefined;
      if (!field) throw unknownKey(key, at, name, Object.keys(shape));
      steps.push({ kind: 'field', name });
      schema = field;
    } else if (s instanceof z.ZodRecord) {
      steps.push({ kind: 'field', name });
      schema = s.valueType;
    } else if (s instanceof z.ZodArray) {
      steps.push({ kind: 'element', selector: name });
      schema = s.element;
    } else {
      throw new LbotError('invalid_argument', `unknown config key '${key}': ${at} is a single value, it has no '${name}'`, { details: { key } });
    }
  }
  return { steps, schema };
}

/** The index of a list element by position or by its `name`, `id`, `binding_id` or `schedule_id`. */
function elementIndex(list: unknown[], selector: string): number {
  if (/^\d+$/.test(selector)) return Number(selector) < list.length ? Number(selector) : -1;
  return list.findIndex((e) => isRecord(e) && [e.name, e.id, e.binding_id, e.schedule_id].includes(selector));
}

/** The value at `steps` in `root`, or undefined where nothing is set. */
export function valueAt(root: unknown, steps: readonly KeyStep[]): unknown {
  let node: unknown = root;
  for (const step of steps) {
    if (step.kind === 'field') node = isRecord(node) && Object.hasOwn(node, step.name) ? node[step.name] : undefined;
    else node = Array.isArray(node) ? node[elementIndex(node, step.selector)] : undefined;
    if (node === undefined) return undefined;
  }
  return node;
}

/** Sets the value at `steps` in the raw file object, creating objects on the way; a list element must exist. */
export function setAt(root: Record<string, unknown>, steps: readonly KeyStep[], key: string, value: unknown): void {
  let node: Record<string, unknown> | unknown[] = root;
  for (const [i, step] of steps.entries()) {
    const last = i === steps.length - 1;
    if (step.kind === 'field') {
      if (Array.isArray(node)) throw new LbotError('invalid_argument', `config key '${key}': expected a list element`, { details: { key } });
      if (last) {
        node[step.name] = value;
        return;
      }
      const next: unknown = node[step.name];
      const child: Record<string, unknown> | unknown[] = isRecord(next) || Array.isArray(next) ? next : steps[i + 1]?.kind === 'element' ? [] : {};
      node[step.name] = child;
      node = child;
    } else {
      if (!Array.isArray(node)) throw new LbotError('invalid_argument', `config key '${key}': expected a list`, { details: { key } });
      const index = elementIndex(node, step.selector);
      if (index < 0) {
        throw new LbotError('not_found', `config key '${key}': no element '${step.selector}' in the list`, {
          hint: 'name an existing element by its position or its name/id; add new ones with their own command (lbot model add, lbot binding add, …)',
          details: { key },
        });
      }
      if (last) {
        node[index] = value;
        return;
      }
      const next: unknown = node[index];
      if (!isRecord(next)) throw new LbotError('invalid_argument', `config key '${key}': element '${step.selector}' is not an object`, { details: { key } });
      node = next;
    }
  }
}

/** Removes the value at `steps` from the raw file object; false when nothing was set there. */
export function unsetAt(root: Record<string, unknown>, steps: readonly KeyStep[]): boolean {
  const parent = valueAt(root, steps.slice(0, -1));
  const last = steps.at(-1);
  if (last === undefined) return false;
  if (last.kind === 'field') {
    if (!isRecord(parent) || !Object.hasOwn(parent, last.name)) return false;
    delete parent[last.name];
    return true;
  }
  if (!Array.isArray(parent)) return false;
  const index = elementIndex(parent, last.selector);
  if (index < 0) return false;
  parent.splice(index, 1);
  return true;
}

/** The values a key accepts, for the error of a refused value: an enum's members, else the type's name. */
export function allowedValues(schema: Schema): string {
  const s = bare(schema);
  if (s instanceof z.ZodEnum) return `one of ${s.options.map(String).join(', ')}`;
  if (s instanceof z.ZodBoolean) return 'true or false';
  if (s instanceof z.ZodNumber) return 'a number';
  if (s instanceof z.ZodString) return 'a string';
  if (s instanceof z.ZodArray) return 'a JSON list';
  if (s instanceof z.ZodObject || s instanceof z.ZodRecord) return 'a JSON object';
  return 'a JSON value';
}
