// Starts a LangBot SDK plugin (`execution.python`): finds the Python, checks that it has the SDK in a
// supported version, launches `python -m langbot_plugin.cli.__init__ run -s --prod` with the env the
// SDK needs (no `.env` injection, nothing written into the plugin dir) and completes the register
// handshake inside the start budget (docs/langbot-plugins.md).
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { LbotError } from '../../core/errors.js';
import type { PluginConnection, PluginSpec, ProxyCallHandler } from '../../core/host/ports.js';
import { isRecord } from '../../core/json.js';
import { childEnv } from '../process/env.js';
import { buildPluginEnv } from './env.js';
import { LangbotPluginConnection } from './langbot-connection.js';
import { SANDBOX_HOME } from './sandbox.js';
import { spawnConnection, type SpawnOptions } from './spawn-connection.js';

/** The SDK versions whose wire lbot speaks: 0.5.3 (the AgentRunner line) up to the 0.x releases after it. */
export const SUPPORTED_SDK_RANGE = { min: [0, 5, 0], below: [1, 0, 0] } as const;
export const LANGBOT_SDK_ARGS = ['-m', 'langbot_plugin.cli.__init__', 'run', '-s', '--prod'] as const;
const PROBE_TIMEOUT_MS = 15_000;
const PROBE_OUTPUT_BYTES = 64 * 1024;

export type LangbotLaunchOptions = {
  /** The Python to run plugins on (config `langbot.python`); else LBOT_LANGBOT_PYTHON, the plugin's `.venv`, then python3 on PATH. */
  python?: string | undefined;
  hostEnv?: NodeJS.ProcessEnv;
  /** The whole handshake (register, initialize_plugin, get_plugin_container) must fit in this; default 20 s. */
  startTimeoutMs: number;
} & SpawnOptions;

/** Reads facts about the interpreter without running plugin code: find_spec and package metadata only. */
const PROBE = [
  'import sys, json, importlib.util, importlib.metadata as m',
  'sys.path.insert(0, sys.argv[1])',
  'spec = importlib.util.find_spec("langbot_plugin")',
  'try:\n    v = m.version("langbot-plugin")\nexcept Exception:\n    v = None',
  'print(json.dumps({"executable": sys.executable, "prefix": sys.prefix, "base_prefix": sys.base_prefix, "found": spec is not None, "version": v}))',
].join('\n');

const ProbeSchema = z.strictObject({
  executable: z.string().min(1),
  prefix: z.string(),
  base_prefix: z.string(),
  found: z.boolean(),
  version: z.string().nullable(),
});
type Probe = z.infer<typeof ProbeSchema>;

/** The interpreter to probe, in the documented order. */
export function choosePython(dir: string, configured: string | undefined, hostEnv: NodeJS.ProcessEnv): string {
  if (configured) return configured;
  const fromEnv = hostEnv.LBOT_LANGBOT_PYTHON;
  if (fromEnv) return fromEnv;
  for (const venv of ['.venv', 'venv']) {
    const candidate = path.join(dir, venv, 'bin', 'python');
    if (existsSync(candidate)) return candidate;
  }
  return 'python3';
}

function parseVersion(v: string): number[] | null {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : null;
}

function below(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0);
  return false;
}

/** Whether an SDK version is one lbot speaks the wire of. */
export function sdkVersionSupported(version: string): boolean {
  const v = parseVersion(version);
  return v !== null && !below(v, SUPPORTED_SDK_RANGE.min) && below(v, SUPPORTED_SDK_RANGE.below);
}

function probePython(python: string, dir: string, hostEnv: NodeJS.ProcessEnv): Promise<Probe> {
  const env = childEnv('helper', {}, hostEnv);
  return new Promise((resolve, reject) => {
    execFile(python, ['-I', '-c', PROBE, dir], { env, cwd: '/', timeout: PROBE_TIMEOUT_MS, maxBuffer: PROBE_OUTPUT_BYTES }, (err, stdout, stderr) => {
      if (err) {
        reject(
          new LbotError(
            'runner.start_failed',
            `could not run the Python for LangBot plugins (${python}): ${err.message.split('\n')[0]}${stderr ? `; stderr: ${stderr.slice(0, 500)}` : ''}`,
            {
              hint: 'set langbot.python in the config or LBOT_LANGBOT_PYTHON to a Python 3 that has the langbot-plugin SDK, or create a .venv in the plugin directory',
            },
          ),
        );
        return;
      }
      let value: unknown;
      try {
        value = JSON.parse(stdout.trim().split('\n').pop() ?? '');
      } catch {
        value = null;
      }
      const parsed = ProbeSchema.safeParse(value);
      if (!parsed.success) reject(new LbotError('runner.start_failed', `${python} did not describe itself as a Python 3 interpreter does`));
      else resolve(parsed.data);
    });
  });
}

function checkSdk(probe: Probe, python: string, spec: PluginSpec, warn: (m: string) => void): void {
  if (!probe.found) {
    throw new LbotError('runner.start_failed', `plugin ${spec.identity} runs on the LangBot plugin SDK, but ${python} cannot import langbot_plugin`, {
      details: { python: probe.executable },
      hint: "install it in the plugin's venv (python -m venv .venv && .venv/bin/pip install langbot-plugin) or point LBOT_LANGBOT_PYTHON at a Python that has it",
    });
  }
  if (probe.version === null) {
    warn(`plugin ${spec.identity}: the langbot_plugin found by ${probe.executable} has no package metadata; its version is not checked`);
    return;
  }
  if (!sdkVersionSupported(probe.version)) {
    throw new LbotError(
      'runner.start_failed',
      `plugin ${spec.identity} runs on langbot-plugin ${probe.version}; lbot speaks the wire of ${SUPPORTED_SDK_RANGE.min.join('.')} up to (not including) ${SUPPORTED_SDK_RANGE.below.join('.')}`,
      { details: { sdk_version: probe.version, python: probe.executable } },
    );
  }
}

/** Where the SDK's file transfers and Python's bytecode go when the plugin is not sandboxed: never the plugin dir. */
function scratchDirs(dir: string): { files: string; pycache: string } {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  const base = path.join(os.tmpdir(), `lbot-langbot-${uid}`, createHash('sha256').update(path.resolve(dir)).digest('hex').slice(0, 16));
  const files = path.join(base, 'files');
  const pycache = path.join(base, 'pycache');
  mkdirSync(files, { recursive: true, mode: 0o700 });
  mkdirSync(pycache, { recursive: true, mode: 0o700 });
  return { files, pycache };
}

function containerIdentity(data: Record<string, unknown>): string | null {
  const container = data.plugin_container;
  if (!isRecord(container) || !isRecord(container.manifest) || !isRecord(container.manifest.manifest)) return null;
  const metadata = container.manifest.manifest.metadata;
  if (!isRecord(metadata) || typeof metadata.author !== 'string' || typeof metadata.name !== 'string') return null;
  return `${metadata.author}/${metadata.name}`;
}

/** Launches the plugin and completes the handshake; rejects with runner.start_failed / runner.protocol_error like lbot's own launcher. */
export async function startLangbotPlugin(
  spec: PluginSpec,
  onApiCall: ProxyCallHandler,
  opts: LangbotLaunchOptions,
  startOpts: { signal?: AbortSignal } = {},
): Promise<PluginConnection> {
  const hostEnv = opts.hostEnv ?? process.env;
  const python = choosePython(spec.dir, opts.python, hostEnv);
  const probe = await probePython(python, spec.dir, hostEnv);
  checkSdk(probe, python, spec, (message) => opts.onWarning?.({ identity: spec.identity, message }));
  startOpts.signal?.throwIfAborted();

  const capability = randomBytes(32).toString('base64url');
  const sandbox = opts.sandbox;
  const sandboxed = sandbox?.resolve().isolation === 'sandbox';
  const scratch = sandboxed ? { files: '/tmp/lbp-rpc', pycache: path.join(SANDBOX_HOME, '.cache', 'lbot-pycache') } : scratchDirs(spec.dir);
  const env = {
    ...buildPluginEnv(spec.identity, spec.env, hostEnv),
    LANGBOT_PLUGIN_REGISTRATION_CAPABILITY: capability,
    LANGBOT_PLUGIN_RUNTIME_PROFILE: 'shared',
    LANGBOT_PLUGIN_FILE_STORAGE_DIR: scratch.files,
    PYTHONPYCACHEPREFIX: scratch.pycache,
    PYTHONUNBUFFERED: '1',
  };
  const cmd: { file: string; args: string[] } = { file: probe.executable, args: [...LANGBOT_SDK_ARGS] };
  const show = [...new Set([probe.prefix, probe.base_prefix])];
  const { connection, command } = spawnConnection(spec, cmd, env, onApiCall, opts, (o) => new LangbotPluginConnection(o), show);
  try {
    await handshake(connection, spec, capability, opts.startTimeoutMs, startOpts.signal);
  } catch (err) {
    await connection.kill();
    if (err instanceof LbotError && err.code === 'cancelled') throw err;
    const e = err instanceof LbotError ? err : new LbotError('runner.start_failed', String(err));
    const tail = connection.stderrTail().trim();
    throw new LbotError(
      e.code === 'runner.protocol_error' ? 'runner.protocol_error' : 'runner.start_failed',
      `${e.message} (command: ${command})${tail ? `; stderr:\n${tail}` : ''}`,
      {
        details: { plugin: spec.identity, command, stderr_tail: connection.stderrTail() },
      },
    );
  }
  return connection;
}

async function handshake(conn: LangbotPluginConnection, spec: PluginSpec, capability: string, budgetMs: number, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + budgetMs;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new LbotError('runner.start_failed', `plugin ${spec.identity} did not send register_plugin within ${budgetMs} ms`)),
      budgetMs,
    );
    timer.unref();
  });
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new LbotError('cancelled', `starting plugin ${spec.identity} was cancelled`));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const reg = await Promise.race([
      conn.registration().catch(async (err: unknown) => {
        await conn.exited;
        throw conn.spawnError
          ? new LbotError('runner.start_failed', `could not start plugin ${spec.identity}: ${conn.spawnError.message} (cwd ${spec.dir})`)
          : err instanceof LbotError && err.code === 'runner.protocol_error'
            ? err
            : new LbotError('runner.start_failed', `plugin ${spec.identity} ${conn.describeExit()} before sending register_plugin`);
      }),
      timedOut,
      aborted,
    ]);
    if (reg.data.registration_capability !== capability) {
      throw new LbotError('runner.protocol_error', `plugin ${spec.identity} registered without the registration capability lbot gave it`);
    }
    const claimed = containerIdentity(reg.data);
    if (claimed !== spec.identity) {
      throw new LbotError(
        'runner.protocol_error',
        `plugin in ${spec.dir} registered as ${claimed ?? '(no plugin_container manifest)'}, but its manifest.yaml names ${spec.identity}`,
      );
    }
    const remaining = () => Math.max(1, deadline - Date.now());
    const settings = { plugin_settings: { enabled: true, priority: 0, plugin_config: {}, install_source: 'local', install_info: {} } };
    await Promise.race([conn.request('initialize_plugin', settings, { timeoutMs: remaining(), signal }), aborted]);
    await Promise.race([conn.request('get_plugin_container', {}, { timeoutMs: remaining(), signal }), aborted]);
    conn.acceptRegistration(reg.seq_id);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}
