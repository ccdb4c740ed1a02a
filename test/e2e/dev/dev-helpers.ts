// Helpers of the developer-loop e2e tests: a hot-reload plugin, a long-running `lbot dev` / `serve --dev`
// process whose stdout lines can be awaited, and small polling helpers.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { execa, type ResultPromise } from 'execa';
import type { TempPlugins } from '../../helpers/plugins.js';
import { FIXTURE_EVENTS } from '../../helpers/plugins.js';
import { LBOT_BIN } from '../../helpers/serve.js';

/** main.js of acme/hot: replies REPLY, after waiting for the file `ctx.config.gate` when one is named. */
export function hotMain(reply: string): string {
  return [
    "import { existsSync } from 'node:fs';",
    "import { setTimeout as sleep } from 'node:timers/promises';",
    "import { completed, definePlugin, defineRunner, message } from 'lbot/sdk';",
    `const REPLY = ${JSON.stringify(reply)};`,
    'const runner = defineRunner({',
    '  async *run(ctx) {',
    '    const gate = ctx.config.gate;',
    "    while (typeof gate === 'string' && !existsSync(gate)) await sleep(20);",
    '    yield message(REPLY);',
    '    yield completed();',
    '  },',
    '});',
    'export default definePlugin({ runners: { default: runner } });',
    '',
  ].join('\n');
}

/**
 * A gate file for hotMain inside the plugin's own directory (a sandboxed plugin sees nothing else of the
 * host), under .git so the dev watcher does not take its creation for an edit.
 */
export async function gateIn(pluginDir: string): Promise<string> {
  await mkdir(path.join(pluginDir, '.git'), { recursive: true });
  return path.join(pluginDir, '.git', 'gate');
}

/** Adds plugin acme/hot (echo's YAML, label "Hot v1", the gated main.js) to the temp plugins dir. */
export async function addHotPlugin(plugins: TempPlugins, reply = 'v1'): Promise<string> {
  const dir = await plugins.add('echo', 'hot');
  await plugins.editYaml('hot', 'manifest.yaml', (doc) => {
    Reflect.set(Reflect.get(doc, 'metadata') as object, 'name', 'hot');
  });
  await plugins.editYaml('hot', 'components/agent_runner/default.yaml', (doc) => {
    Reflect.set(Reflect.get(doc, 'metadata') as object, 'label', { en_US: 'Hot v1' });
  });
  await writeFile(path.join(dir, 'main.js'), hotMain(reply));
  return dir;
}

export const HOT = 'plugin:acme/hot/default';

export async function msgEvent(): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(path.join(FIXTURE_EVENTS, 'msg.json'), 'utf8')) as Record<string, unknown>;
}

export type LiveProcess = {
  proc: ResultPromise;
  lines: Array<Record<string, unknown>>;
  stderr(): string;
  /** Resolves with the first stdout JSON line (seen so far or later) matching `match`. */
  waitLine(match: (l: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  stop(): Promise<number | undefined>;
};

/** Starts `lbot --json ...args` and parses every stdout line as it arrives. */
export function startLbot(args: string[], env: Record<string, string | undefined> = {}): LiveProcess {
  const proc = execa(process.execPath, [LBOT_BIN, '--json', ...args], { env: { LBOT_HOME: undefined, ...env }, reject: false, buffer: false, stdin: 'ignore' });
  const lines: Array<Record<string, unknown>> = [];
  const waiters = new Set<() => void>();
  let errText = '';
  proc.stderr?.on('data', (d: Buffer) => (errText += d.toString()));
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      lines.push({ type: 'unparsed', line });
    }
    for (const w of [...waiters]) w();
  });
  return {
    proc,
    lines,
    stderr: () => errText,
    waitLine(match, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = lines.find(match);
          if (!hit) return;
          cleanup();
          resolve(hit);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no matching line within ${timeoutMs} ms; stdout: ${JSON.stringify(lines).slice(-2000)}; stderr: ${errText.slice(-2000)}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        void Promise.resolve(proc).then(() => {
          if (waiters.has(check)) {
            cleanup();
            reject(new Error(`the process exited before the expected line; stderr: ${errText.slice(-2000)}`));
          }
        });
        check();
      });
    },
    async stop() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      const r = await proc;
      return r.exitCode;
    },
  };
}

/** Polls `probe` until it returns a value other than undefined. */
export async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > until) throw new Error(`${what} not reached within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The content of the last delivered message.completed of a run record. */
export function replyOf(record: Record<string, unknown>): unknown {
  const results = Array.isArray(record.results) ? record.results : [];
  const last = results.filter((r: unknown) => typeof r === 'object' && r !== null && Reflect.get(r, 'type') === 'message.completed').at(-1) as
    Record<string, unknown> | undefined;
  const message = last?.data !== null && typeof last?.data === 'object' ? Reflect.get(last.data, 'message') : undefined;
  return typeof message === 'object' && message !== null ? Reflect.get(message, 'content') : undefined;
}
