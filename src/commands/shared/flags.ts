// Parses commander's raw option bag with a zod schema; a bad flag becomes invalid_argument (exit 2).
import { statSync } from 'node:fs';
import type { z } from 'zod';
import { LbotError } from '../../core/errors.js';
import { firstIssue } from '../../core/zod-issue.js';

export function parseFlags<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = firstIssue(parsed.error);
  const [first] = issue.path;
  const flag = first === undefined ? 'flags' : `--${first.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  throw new LbotError('invalid_argument', `${flag}: ${parsed.error.issues.length ? issue.message : 'invalid value'}`, {
    details: { path: issue.path },
  });
}

/** Collects a repeatable option into an array (commander's `argParser`). */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Parses repeated `K=V` pairs; throws invalid_argument naming the flag on a malformed pair. */
export function parseKeyValues(pairs: readonly string[] | undefined, flag: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const pair of pairs ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new LbotError('invalid_argument', `${flag} expects KEY=VALUE, got ${JSON.stringify(pair)}`);
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return { ...out };
}

/** `--plugin DIR` (commander's `argParser`): a directory that is not there is named as such, not as "no valid runner". */
export function existingDir(flag: string): (value: string) => string {
  return (value) => {
    let isDir = false;
    try {
      isDir = statSync(value).isDirectory();
    } catch {
      throw new LbotError('not_found', `${flag} ${value}: no such directory`, { details: { path: value } });
    }
    if (!isDir) throw new LbotError('invalid_argument', `${flag} ${value}: not a directory`, { details: { path: value } });
    return value;
  };
}
