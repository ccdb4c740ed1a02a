// Files a user names on the command line: clear errors for missing paths and directories, and event files
// (an envelope, an array of them, or platform payloads — the gateway loads only when one is present).
import { readFile, stat } from 'node:fs/promises';
import { LbotError } from '../core/errors.js';
import { isRecord } from '../core/json.js';
import { parseJsonText } from '../core/json-parse.js';
import { eventsFromJson, needsGateway, parseEventJson, type EventInput } from '../core/host/event-input.js';
import type { PlatformChoice } from '../core/gateway/types.js';

/** Reads a user-named input file ('-' = stdin) with clear errors for missing paths and directories. */
export async function readInputFile(file: string, flag: string): Promise<string> {
  if (file === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    return Buffer.concat(chunks).toString('utf8');
  }
  let info;
  try {
    info = await stat(file);
  } catch {
    throw new LbotError('invalid_argument', `${flag} ${file}: no such file`, { details: { file }, hint: `check the path given to ${flag}` });
  }
  if (info.isDirectory()) throw new LbotError('invalid_argument', `${flag} ${file}: is a directory, expected a JSON file`, { details: { file } });
  return readFile(file, 'utf8');
}

/** Reads a JSON file a flag names ('-' = stdin); invalid JSON fails with invalid_argument, line and column. */
export async function readJsonFile(file: string, flag: string): Promise<unknown> {
  return parseJsonText(await readInputFile(file, flag), file, 'invalid_argument');
}

/** Like readJsonFile, for files that must hold one JSON object (a binding, a runner config). */
export async function readJsonObject(file: string, flag: string): Promise<Record<string, unknown>> {
  const value = await readJsonFile(file, flag);
  if (!isRecord(value)) throw new LbotError('invalid_argument', `${flag} ${file}: expected a JSON object`, { details: { file } });
  return value;
}

/** Reads and parses an event file ('-' = stdin) into the events to run, in order. */
export async function readEventFile(file: string, platform: PlatformChoice, maxDataBytes: number): Promise<EventInput[]> {
  const value = parseEventJson(await readInputFile(file, '--event'), file);
  const normalize = needsGateway(value, platform) ? (await import('../core/gateway/normalize.js')).normalizePlatformPayload : undefined;
  return eventsFromJson(value, file, maxDataBytes, platform, normalize);
}
