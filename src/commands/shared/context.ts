// What every command receives: the global flags, read once, and the reporter.
import path from 'node:path';
import { LbotError } from '../../core/errors.js';
import type { Output } from './output.js';
import type { ConfigFile } from '../../core/stores/config-file.js';

export type GlobalFlags = {
  dataDir: string;
  /** The run stores' PostgreSQL URL (--store, else LBOT_DATABASE_URL); null: SQLite in the data dir. */
  store: string | null;
  pluginsDir: string;
  /** --json, or --jsonl (which also sets `jsonl`). */
  json: boolean;
  /** List commands print NDJSON (one item a line) instead of one JSON array. */
  jsonl: boolean;
  verbose: boolean;
  debug: boolean;
  /** LBOT_CHECK_SHAPES=1: every --json value is checked against its shape before it is printed. */
  checkShapes: boolean;
};

export type CliContext = {
  readonly flags: GlobalFlags;
  readonly output: Output;
  /** The data dir's config file (loaded on first use; a broken file fails with config.invalid). */
  configFile(): ConfigFile;
  /** Aborted on the first SIGINT or SIGTERM (shared/interrupt.ts); reading it is what makes a command interruptible. */
  readonly signal: AbortSignal;
  /** Exit code the process ends with once the action returns (commands set it for non-error outcomes). */
  exitCode: number;
};

/** How a command reaches the context: built when the command runs, after the global flags are parsed. */
export type GetContext = () => CliContext;

/** `--store` / LBOT_DATABASE_URL: a postgres:// URL, or `sqlite` (and empty) for the data dir's SQLite file. */
function storeUrl(value: string | undefined): string | null {
  if (value === undefined || value === '' || value === 'sqlite') return null;
  if (/^postgres(ql)?:\/\//i.test(value)) return value;
  throw new LbotError('invalid_argument', `--store: expected a postgres:// URL or sqlite, got ${JSON.stringify(value.slice(0, 40))}`, {
    hint: 'pass --store postgres://USER@HOST:PORT/DB (or set LBOT_DATABASE_URL), or leave it unset for SQLite in the data dir',
  });
}

/** Resolves the global flags: --data-dir, else LBOT_HOME, else ./.lbot; --plugins defaults under it. */
export function resolveGlobalFlags(
  raw: { dataDir?: string; store?: string; plugins?: string; json?: boolean; jsonl?: boolean; verbose?: boolean; debug?: boolean },
  env: NodeJS.ProcessEnv = process.env,
): GlobalFlags {
  const dataDir = path.resolve(raw.dataDir ?? env.LBOT_HOME ?? '.lbot');
  return {
    dataDir,
    store: storeUrl(raw.store ?? env.LBOT_DATABASE_URL),
    pluginsDir: path.resolve(raw.plugins ?? path.join(dataDir, 'plugins')),
    json: (raw.json ?? false) || (raw.jsonl ?? false),
    jsonl: raw.jsonl ?? false,
    verbose: raw.verbose ?? false,
    debug: raw.debug ?? false,
    checkShapes: env.LBOT_CHECK_SHAPES === '1',
  };
}
