// Parses platform payloads with zod and turns the first problem into `event.invalid` naming the field.
import type { z } from 'zod';
import { LbotError } from '../errors.js';
import { isRecord } from '../json.js';
import type { Platform } from './types.js';

export type PayloadPath = Array<string | number>;

/** `message.chat.id`, `result[0].message`: a path as a person reads it. */
export function formatPath(path: PayloadPath): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? part : `.${part}`;
  }
  return out === '' ? '(the payload itself)' : out;
}

/** The `event.invalid` error every malformed payload becomes. */
export function invalidPayload(platform: Platform, path: PayloadPath, problem: string, hint?: string): LbotError {
  return new LbotError('event.invalid', `invalid ${platform} payload: ${formatPath(path)}: ${problem}`, {
    details: { path, platform },
    hint: hint ?? `check that the payload is a ${platform} event as the platform sends it, or pass the right --platform`,
  });
}

/** Parses `value` (found at `basePath` inside the payload) or throws `event.invalid` with the full path. */
export function parsePayload<S extends z.ZodType>(platform: Platform, schema: S, value: unknown, basePath: PayloadPath = []): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const rel = (issue?.path ?? []).filter((p): p is string | number => typeof p === 'string' || typeof p === 'number');
  const message = issue?.message ?? 'does not match the expected shape';
  throw invalidPayload(platform, [...basePath, ...rel], valueAt(value, rel) === undefined ? `is missing (${message})` : message);
}

function valueAt(root: unknown, path: PayloadPath): unknown {
  let node = root;
  for (const key of path) {
    if (Array.isArray(node) && typeof key === 'number') node = node[key];
    else if (isRecord(node) && typeof key === 'string') node = node[key];
    else return undefined;
  }
  return node;
}
