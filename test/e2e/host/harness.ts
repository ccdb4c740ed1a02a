// Scenario harness for the host acceptance tests: a fresh data dir and a temp plugins dir holding a copy
// of the scripted fixture per scenario, and the built `bin/lbot.js` run with execa as a user would.
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { execa, type ResultPromise } from 'execa';
import { onTestFinished } from 'vitest';
import { createTempPlugins, FIXTURE_EVENTS, REPO_ROOT, type TempPlugins } from '../../helpers/plugins.js';

export { REPO_ROOT };
export const LBOT_BIN = path.join(REPO_ROOT, 'bin', 'lbot.js');
export const SCRIPTED = 'plugin:acme/scripted/default';
export const CLI_BINDING = `cli:${SCRIPTED}`;
export const RUNNER_COMPONENT = 'components/agent_runner/default.yaml';

if (!existsSync(path.join(REPO_ROOT, 'dist', 'cli.js'))) {
  throw new Error('dist/ is missing: run `npm run build` before the e2e tests (`npm test` does it)');
}

/** F-CFG: two fake models. */
export const F_CFG_MODELS = [
  { id: 'm-fake', provider: 'fake', reply: 'FAKE_PONG', api_key: 'sk-test-SECRET123' },
  { id: 'm-other', provider: 'fake', reply: 'OTHER' },
];

export type Step = Record<string, unknown>;
export type CliResult = { exitCode: number; stdout: string; stderr: string; signal: string | null };

export type LbotOptions = {
  env?: Record<string, string | undefined>;
  input?: string;
  /** Global flags are added unless false (for tests of a bare invocation). */
  globals?: boolean;
  timeoutMs?: number;
};

export type RunOptions = LbotOptions & {
  /** An F-EV fixture name (`msg.json`) or a path to an event file. */
  event?: string;
  /** Extra keys of the --config file next to `script`. */
  config?: Record<string, unknown>;
  json?: boolean;
  verbose?: boolean;
  runner?: string;
  args?: string[];
};

export type Scenario = {
  root: string;
  dataDir: string;
  plugins: TempPlugins;
  /** Runs `lbot` with --data-dir / --plugins of the scenario. */
  lbot(args: readonly string[], opts?: LbotOptions): Promise<CliResult>;
  /** Starts `lbot` without waiting (for signal tests); the process is killed when the test ends. */
  spawn(args: readonly string[], opts?: LbotOptions): ResultPromise<{ reject: false; encoding: 'utf8'; stripFinalNewline: false }>;
  /** `lbot run` of the scripted runner with `--config {script, ...config}`. */
  run(script: readonly Step[], opts?: RunOptions): Promise<CliResult>;
  /** The argv of `run` (for spawn). */
  runArgs(script: readonly Step[], opts?: RunOptions): Promise<string[]>;
  /** Writes a JSON file into the scenario root and returns its path. */
  writeJson(name: string, value: unknown): Promise<string>;
  /** Writes `<data-dir>/lbot.config.json`. */
  writeConfig(value: Record<string, unknown>): Promise<void>;
  /**
   * Copies a fixture runner in as plugin `acme/<as>` (the manifest's metadata.name is set to `as`),
   * optionally replacing its main.js; returns its runner id.
   */
  addPlugin(as: string, opts?: { from?: string; mainJs?: string }): Promise<string>;
  /** Edits the scripted copy's runner component YAML. */
  editRunner(edit: (doc: Record<string, unknown>) => void, plugin?: string): Promise<void>;
  /** `--json` output of an inspection command, parsed (one object). */
  json<T = Record<string, unknown>>(args: readonly string[]): Promise<T>;
  /** `--json` output of a list command: its one JSON array. */
  jsonList<T = Record<string, unknown>>(args: readonly string[]): Promise<T[]>;
  /**
   * A page of a paged list (`events list`, `transcript page`): the array as `items`, and the cursor lbot
   * names on stderr when there is more (`more: --before SEQ`) as `has_more` / `next_seq`.
   */
  page(args: readonly string[]): Promise<{ items: unknown[]; has_more: boolean; next_seq: number | null }>;
};

let counter = 0;

export function eventPath(name: string): string {
  return path.isAbsolute(name) ? name : path.join(FIXTURE_EVENTS, name);
}

/** A fresh scenario, removed when the current test finishes. */
export async function scenario(fixtures: readonly string[] = ['scripted']): Promise<Scenario> {
  const plugins = await createTempPlugins(fixtures);
  const root = plugins.root;
  const dataDir = path.join(root, 'data');
  await mkdir(dataDir);
  const children = new Set<ResultPromise>();
  onTestFinished(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await Promise.allSettled([...children]);
    await plugins.cleanup();
  });

  const argv = (args: readonly string[], opts: LbotOptions = {}) =>
    opts.globals === false ? [...args] : ['--data-dir', dataDir, '--plugins', plugins.pluginsDir, ...args];
  const execOpts = (opts: LbotOptions) => ({
    cwd: root,
    reject: false as const,
    encoding: 'utf8' as const,
    stripFinalNewline: false,
    env: { LBOT_HOME: undefined, ...opts.env },
    ...(opts.input === undefined ? {} : { input: opts.input }),
    timeout: opts.timeoutMs ?? 45_000,
    maxBuffer: 256 * 1024 * 1024,
  });

  const s: Scenario = {
    root,
    dataDir,
    plugins,
    async lbot(args, opts = {}) {
      const r = await execa(process.execPath, [LBOT_BIN, ...argv(args, opts)], execOpts(opts));
      return { exitCode: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr, signal: r.signal ?? null };
    },
    spawn(args, opts = {}) {
      const child = execa(process.execPath, [LBOT_BIN, ...argv(args, opts)], execOpts(opts));
      children.add(child);
      return child;
    },
    async runArgs(script, opts = {}) {
      const cfg = await s.writeJson(`cfg-${++counter}.json`, { script, ...opts.config });
      return [
        ...(opts.json ? ['--json'] : []),
        ...(opts.verbose ? ['--verbose'] : []),
        'run',
        '--event',
        eventPath(opts.event ?? 'msg.json'),
        '--runner',
        opts.runner ?? SCRIPTED,
        '--config',
        cfg,
        ...(opts.args ?? []),
      ];
    },
    async run(script, opts = {}) {
      return s.lbot(await s.runArgs(script, opts), opts);
    },
    async writeJson(name, value) {
      const file = path.join(root, name);
      await writeFile(file, typeof value === 'string' ? value : JSON.stringify(value));
      return file;
    },
    async writeConfig(value) {
      await writeFile(path.join(dataDir, 'lbot.config.json'), JSON.stringify(value, null, 2));
    },
    async addPlugin(as, opts = {}) {
      const dir = await plugins.add(opts.from ?? 'scripted', as);
      await plugins.editYaml(as, 'manifest.yaml', (doc) => {
        if (isRecord(doc.metadata)) doc.metadata.name = as;
      });
      if (opts.mainJs !== undefined) await writeFile(path.join(dir, 'main.js'), opts.mainJs);
      return `plugin:acme/${as}/default`;
    },
    editRunner(edit, plugin = 'scripted') {
      return plugins.editYaml(plugin, RUNNER_COMPONENT, edit);
    },
    async json(args) {
      const r = await s.lbot(['--json', ...args]);
      if (r.exitCode !== 0) throw new Error(`lbot ${args.join(' ')} exited ${r.exitCode}: ${r.stderr}`);
      return JSON.parse(r.stdout);
    },
    async jsonList(args) {
      const r = await s.lbot(['--json', ...args]);
      if (r.exitCode !== 0) throw new Error(`lbot ${args.join(' ')} exited ${r.exitCode}: ${r.stderr}`);
      const value: unknown = JSON.parse(r.stdout);
      if (!Array.isArray(value)) throw new Error(`lbot ${args.join(' ')}: not one JSON array: ${r.stdout.slice(0, 200)}`);
      return value;
    },
    async page(args) {
      const r = await s.lbot(['--json', ...args]);
      if (r.exitCode !== 0) throw new Error(`lbot ${args.join(' ')} exited ${r.exitCode}: ${r.stderr}`);
      const items: unknown = JSON.parse(r.stdout);
      if (!Array.isArray(items)) throw new Error(`lbot ${args.join(' ')}: not one JSON array: ${r.stdout.slice(0, 200)}`);
      const more = /more: --(?:before|after) (\d+)/.exec(r.stderr);
      return { items, has_more: more !== null, next_seq: more ? Number(more[1]) : null };
    },
  };
  return s;
}

/** Every non-empty stdout line parsed as JSON. */
export function parseLines<T = Record<string, unknown>>(stdout: string): T[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}

type Line = { type?: string; run_id?: string; data?: { message?: { content?: unknown } }; [k: string]: unknown };

/** The content strings of the `message.completed` lines of a `--json` run output. */
export function completedTexts(stdout: string): string[] {
  return parseLines<Line>(stdout)
    .filter((l) => l.type === 'message.completed')
    .map((l) => String(l.data?.message?.content ?? ''));
}

/** The `report` / `dump_*` payloads of a `--json` run output, parsed (plain-text messages are skipped). */
export function reports(stdout: string): unknown[] {
  return completedTexts(stdout)
    .filter((t) => t.startsWith('{'))
    .map((t): unknown => JSON.parse(t));
}

export function summaries(stdout: string): Record<string, unknown>[] {
  return parseLines<Line>(stdout).filter((l) => l.type === 'run.summary');
}

/** The `{ok:false,error}` line (or the last failed run.summary's error) of a `--json` command. */
export function errorOf(stdout: string): Record<string, unknown> | undefined {
  for (const l of parseLines<Record<string, unknown>>(stdout).reverse()) {
    if (l.ok === false && isRecord(l.error)) return l.error;
    if (l.type === 'run.summary' && isRecord(l.error)) return l.error;
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads a dotted path (`a.b.0.c`) out of parsed JSON; undefined when any step is missing. */
export function pick(value: unknown, dotted: string): unknown {
  let node: unknown = value;
  for (const key of dotted.split('.')) {
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isRecord(node)) node = node[key];
    else return undefined;
  }
  return node;
}

export const str = (value: unknown, dotted: string): string => String(pick(value, dotted));
export const list = (value: unknown, dotted: string): unknown[] => {
  const v = pick(value, dotted);
  return Array.isArray(v) ? v : [];
};

/**
 * main.js of a one-off runner plugin: `body` is the body of `async *run(ctx, api)`, with `message`,
 * `completed`, `failed` and `createHash` in scope (add it with `s.addPlugin(name, { mainJs: probe(body) })`).
 */
export function probe(body: string): string {
  return [
    "import { createHash } from 'node:crypto';",
    "import { completed, definePlugin, defineRunner, failed, message } from 'lbot/sdk';",
    'void createHash; void completed; void failed; void message;',
    `const runner = defineRunner({ async *run(ctx, api) {\n${body}\n} });`,
    'export default definePlugin({ runners: { default: runner } });',
    '',
  ].join('\n');
}

/** Script steps. */
export const emit = (type: string, data: Record<string, unknown> = {}): Step => ({ emit: { type, data } });
export const say = (content: string): Step => emit('message.completed', { message: { role: 'assistant', content } });
export const delta = (content: string): Step => emit('message.delta', { chunk: { role: 'assistant', content } });
export const done = (data: Record<string, unknown> = {}): Step => emit('run.completed', data);
export const api = (action: string, args: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Step => ({
  api: { action, args },
  report: true,
  ...extra,
});
export const dump: Step = { dump_context: true };

/** Opens the scenario's SQLite database read-only, for checks no command exposes (row counts). */
export function openDb(dataDir: string): Database.Database {
  return new Database(path.join(dataDir, 'lbot.db'), { readonly: true, fileMustExist: true });
}

export function count(dataDir: string, sql: string, ...params: unknown[]): number {
  const db = openDb(dataDir);
  try {
    const row: unknown = db.prepare(sql).get(...params);
    return isRecord(row) ? Number(Object.values(row)[0]) : 0;
  } finally {
    db.close();
  }
}

/** Resolves with the first stdout line matching `match` (rejects if the process ends first). */
export function firstLine(child: ResultPromise, match: (line: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (chunk: Buffer | string) => {
      buf += chunk.toString();
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      const hit = lines.find(match);
      if (hit !== undefined) {
        child.stdout?.off('data', onData);
        resolve(hit);
      }
    };
    child.stdout?.on('data', onData);
    void Promise.resolve(child).then(() => reject(new Error('the process ended before the expected output line')));
  });
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
