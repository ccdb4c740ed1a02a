// The config store: `<data-dir>/lbot.config.json` on lowdb, zod-validated on load, env overrides applied.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Low, type Adapter } from 'lowdb';
import { applyEnvOverrides, parseConfig, type Config } from '../config.js';
import { LbotError } from '../errors.js';
import { isRecord } from '../json.js';
import { parseJsonText } from '../json-parse.js';
import { ensurePrivateDir, tightenPrivateFile, writePrivateFile } from './private-files.js';

export const CONFIG_FILE_NAME = 'lbot.config.json';

export type ConfigFile = {
  readonly file: string;
  /** The effective config: file + env overrides + defaults. */
  readonly config: Config;
  /** The file as written (no env overrides, no defaults). */
  raw(): Record<string, unknown>;
  /** Reads the file as written (no env, no defaults), edits it and writes it back atomically. */
  update(edit: (raw: Record<string, unknown>) => void): Promise<Config>;
  /**
   * Re-reads the file (another process may have edited it) and makes it the effective config. A file that
   * does not load throws config.invalid and leaves the effective config as it was.
   */
  reload(): Config;
};

/**
 * lowdb's storage for the config: the file holds model keys, MCP tokens and webhook secrets, so it is
 * written 0600 through a temp file created 0600 and renamed (never a moment at the umask's mode).
 */
class PrivateJsonFile implements Adapter<Record<string, unknown>> {
  constructor(private readonly file: string) {}
  read(): Promise<Record<string, unknown> | null> {
    return Promise.resolve(readRaw(this.file));
  }
  write(data: Record<string, unknown>): Promise<void> {
    writePrivateFile(this.file, JSON.stringify(data, null, 2));
    return Promise.resolve();
  }
}

function readRaw(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return {};
    throw new LbotError('store.unavailable', `cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`, { details: { file } });
  }
  return parseRawText(text, file);
}

function parseRawText(text: string, file: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  const raw = parseJsonText(text, file, 'config.invalid');
  if (!isRecord(raw)) throw new LbotError('config.invalid', `${file}:1:1: the config must be a JSON object`, { details: { file } });
  return raw;
}

export function configFilePath(dataDir: string): string {
  return path.join(dataDir, CONFIG_FILE_NAME);
}

/** Checks a config file's text as `lbot` would load it (JSON object, schema); throws config.invalid naming `file`. */
export function checkConfigText(text: string, file: string): void {
  parseConfig(parseRawText(text, file), file);
}

/** Loads the config of a data dir; a missing file means all defaults. */
export function openConfigFile(dataDir: string, env: NodeJS.ProcessEnv = process.env): ConfigFile {
  const file = configFilePath(dataDir);
  const load = (raw: Record<string, unknown>) => parseConfig(applyEnvOverrides(raw, env), file);
  tightenPrivateFile(file); // a config written by hand or by an older lbot may be world-readable
  let config = load(readRaw(file));
  return {
    file,
    get config() {
      return config;
    },
    raw: () => readRaw(file),
    async update(edit) {
      const raw = readRaw(file);
      edit(raw);
      parseConfig(raw, file); // refuse to write a file that would not load
      ensurePrivateDir(path.dirname(file));
      const db = new Low<Record<string, unknown>>(new PrivateJsonFile(file), {});
      db.data = raw;
      await db.write();
      config = load(raw);
      return config;
    },
    reload() {
      config = load(readRaw(file));
      return config;
    },
  };
}
