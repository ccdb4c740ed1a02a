// Small file primitives for box records: atomic JSON writes, reads through a zod schema, touch.
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { z } from 'zod';
import { tryParseJson } from '../../core/json.js';

/** Writes `value` as JSON to `file` through a temp file and a rename, so readers never see half a file. */
export function writeJsonAtomic(file: string, value: unknown, mode = 0o600): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 1)}\n`, { mode });
  renameSync(tmp, file);
}

/** Reads and validates a JSON file; a missing, unreadable or invalid file reads as null. */
export function readJson<S extends z.ZodType>(file: string, schema: S): z.output<S> | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const parsed = schema.safeParse(tryParseJson(text));
  return parsed.success ? parsed.data : null;
}

/** Sets a file's mtime to now, creating it when missing. */
export function touch(file: string): void {
  const now = new Date();
  try {
    utimesSync(file, now, now);
  } catch {
    try {
      const fd = openSync(file, 'a', 0o600);
      closeSync(fd);
    } catch {
      // directory vanished (session removed concurrently)
    }
  }
}

/** Writes a small secret file readable only by the owner. */
export function writeSecret(file: string, content: string): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const fd = openSync(file, 'w', 0o600);
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
}
