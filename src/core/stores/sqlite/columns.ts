// Typed readers for result rows: better-sqlite3 returns `unknown`, and a row that does not match the schema is a bug.
import { LbotError } from '../../errors.js';
import { isRecord, tryParseJson } from '../../json.js';
import type { JsonObject } from '../../protocol/event.js';

export type Row = Record<string, unknown>;

function mismatch(column: string, expected: string, value: unknown): LbotError {
  return new LbotError(
    'internal',
    `lbot.db column ${column} holds ${value === null ? 'null' : typeof value}, expected ${expected}; the database may have been edited by hand`,
    {
      details: { column },
    },
  );
}

/** One row, or null when the query found none. */
export function rowOrNull(value: unknown): Row | null {
  if (value === undefined) return null;
  if (!isRecord(value)) throw mismatch('(row)', 'an object', value);
  return value;
}

/** Every row of a result. */
export function rowsOf(values: unknown[]): Row[] {
  return values.map((v) => {
    if (!isRecord(v)) throw mismatch('(row)', 'an object', v);
    return v;
  });
}

export function text(row: Row, column: string): string {
  const v = row[column];
  if (typeof v !== 'string') throw mismatch(column, 'text', v);
  return v;
}

export function textOrNull(row: Row, column: string): string | null {
  const v = row[column];
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string') throw mismatch(column, 'text', v);
  return v;
}

export function num(row: Row, column: string): number {
  const v = row[column];
  if (typeof v !== 'number') throw mismatch(column, 'a number', v);
  return v;
}

export function numOrNull(row: Row, column: string): number | null {
  const v = row[column];
  if (v === null || v === undefined) return null;
  if (typeof v !== 'number') throw mismatch(column, 'a number', v);
  return v;
}

export function blob(row: Row, column: string): Buffer {
  const v = row[column];
  if (!Buffer.isBuffer(v)) throw mismatch(column, 'a blob', v);
  return v;
}

/** A JSON-object column; null, unparseable or non-object text reads as `{}`. */
export function jsonObject(row: Row, column: string): JsonObject {
  return jsonObjectOrNull(row, column) ?? {};
}

export function jsonObjectOrNull(row: Row, column: string): JsonObject | null {
  const raw = textOrNull(row, column);
  if (raw === null) return null;
  const parsed = tryParseJson(raw);
  return isRecord(parsed) ? parsed : null;
}

/** A JSON list of objects; anything else reads as `[]`. */
export function jsonObjectList(row: Row, column: string): JsonObject[] {
  const raw = textOrNull(row, column);
  if (raw === null) return [];
  const parsed = tryParseJson(raw);
  return Array.isArray(parsed) ? parsed.filter(isRecord) : [];
}

/** Serializes a JSON value for a TEXT column. */
export function jsonText(value: unknown): string {
  return JSON.stringify(value);
}
