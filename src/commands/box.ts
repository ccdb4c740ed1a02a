// `lbot box …`: exec, sessions, rm, status, errors, profiles, process start|stop|status, attach, serve.
import type { Command } from 'commander';
import { z } from 'zod';
import { LbotError } from '../core/errors.js';
import { BACKEND_NAMES, type MountSpec } from '../core/box/model.js';
import { PROFILES } from '../core/box/profiles.js';
import { argvToCommand } from '../core/box/shell.js';
import type { BoxService, BoxServiceOptions } from '../runtime/box/service.js';
import { registerBoxServe } from './box-serve.js';
import { EXIT } from './shared/exit-codes.js';
import { collect, parseFlags, parseKeyValues } from './shared/flags.js';
import type { CliContext } from './shared/context.js';
import type { GetContext } from './shared/context.js';
import { localIso, table } from './shared/table.js';
import * as shapes from '../core/shapes/index.js';

const ExecFlagsSchema = z.object({
  session: z.string().optional(),
  profile: z.string().optional(),
  backend: z.enum(BACKEND_NAMES).optional(),
  image: z.string().optional(),
  timeout: z.string().optional(),
  network: z.enum(['on', 'off']).optional(),
  hostPath: z.string().optional(),
  mount: z.array(z.string()).optional(),
  workdir: z.string().optional(),
  env: z.array(z.string()).optional(),
  memory: z.string().optional(),
  cpus: z.string().optional(),
  pids: z.string().optional(),
});

const ProcessFlagsSchema = z.object({
  session: z.string().min(1, 'is required'),
  id: z.string().min(1, 'is required'),
  env: z.array(z.string()).optional(),
  cwd: z.string().optional(),
});

/** `HOST:CONTAINER[:ro|rw]` → a mount spec (paths are checked by the mount policy later). */
function parseMount(value: string): MountSpec {
  const parts = value.split(':');
  const mode = parts.length === 3 ? parts[2] : parts.length === 2 ? 'rw' : undefined;
  if (!parts[0] || !parts[1] || (mode !== 'ro' && mode !== 'rw')) {
    throw new LbotError('invalid_argument', `--mount expects HOST:CONTAINER:ro|rw, got ${JSON.stringify(value)}`);
  }
  return { host_path: parts[0], mount_path: parts[1], mode };
}

/** The box service, loaded on use so `lbot --help` and other commands stay light. */
async function createBoxService(opts: BoxServiceOptions): Promise<BoxService> {
  return (await import('../runtime/box/service.js')).createBoxService(opts);
}

/** Opens the box service for a command and runs the start-of-command housekeeping (reaping, orphans). */
async function openBox(ctx: CliContext, backend?: (typeof BACKEND_NAMES)[number]): Promise<BoxService> {
  const box = await createBoxService({
    dataDir: ctx.flags.dataDir,
    config: ctx.configFile().config.box,
    backend: backend ?? null,
    warn: (m) => ctx.output.warn(m),
  });
  await box.reapExpired();
  await box.cleanupOrphans();
  return box;
}

function registerExec(box: Command, getCtx: GetContext): void {
  box
    .command('exec')
    .description('run a command in a box session; exits with its status (124 timed out, 125 refused by lbot or the sandbox)')
    .argument('<command...>', 'the command and its arguments, after --')
    .option('--session <id>', 'session to run in (created on demand, kept until rm or TTL); without it a one-shot session is used')
    .option('--profile <name>', `profile: ${Object.keys(PROFILES).join(', ')}`)
    .option('--backend <name>', `backend: ${BACKEND_NAMES.join(', ')} (host has no isolation)`)
    .option('--image <image>', 'image (container backends)')
    .option('--timeout <sec>', 'timeout in seconds (clamped to the profile maximum)')
    .option('--network <on|off>', 'network access')
    .option('--host-path <dir>', 'host directory mounted at /workspace (must be under box.allowed_mount_roots)')
    .option('--mount <host:container:ro|rw>', 'extra mount (repeatable)', collect)
    .option('--workdir <dir>', 'working directory inside the box')
    .option('--env <K=V>', 'environment variable (repeatable)', collect)
    .option('--memory <mb>', 'memory limit in MiB')
    .option('--cpus <n>', 'CPU limit')
    .option('--pids <n>', 'process limit')
    .action(async (command: string[], raw: unknown) => {
      const ctx = getCtx();
      try {
        const flags = parseFlags(ExecFlagsSchema, raw);
        const env = parseKeyValues(flags.env, '--env');
        const mounts = (flags.mount ?? []).map(parseMount);
        const box = await openBox(ctx, flags.backend);
        const input = {
          cmd: argvToCommand(command),
          session_id: flags.session ?? null,
          profile: flags.profile ?? null,
          ...(flags.image !== undefined ? { image: flags.image } : {}),
          ...(flags.timeout !== undefined ? { timeout_sec: flags.timeout } : {}),
          ...(flags.network !== undefined ? { network: flags.network } : {}),
          ...(flags.hostPath !== undefined ? { host_path: flags.hostPath } : {}),
          ...(mounts.length > 0 ? { extra_mounts: mounts } : {}),
          ...(flags.workdir !== undefined ? { workdir: flags.workdir } : {}),
          ...(flags.memory !== undefined ? { memory_mb: flags.memory } : {}),
          ...(flags.cpus !== undefined ? { cpus: flags.cpus } : {}),
          ...(flags.pids !== undefined ? { pids_limit: flags.pids } : {}),
          env,
        };
        // Ctrl-C or a closed stdout (`… | head`) stops the command's process group, like a container CLI.
        const pipeClosed = new AbortController();
        const onPipe = () => pipeClosed.abort();
        const interrupt = ctx.signal;
        process.stdout.on('error', onPipe);
        const sinks = ctx.flags.json ? {} : { sinks: { stdout: process.stdout, stderr: process.stderr } };
        const { result, effective_spec } = await box.exec(input, { signal: AbortSignal.any([interrupt, pipeClosed.signal]), ...sinks }).finally(() => {
          process.stdout.off('error', onPipe);
        });
        if (ctx.flags.json) ctx.output.item(shapes.BoxExec, { ...result, effective_spec });
        else if (result.status === 'timed_out')
          ctx.output.warn(`the command timed out after ${effective_spec.timeout_sec} s; session ${result.session_id} was removed`);
        ctx.exitCode = interrupt.aborted ? EXIT.interrupted : result.status === 'timed_out' ? EXIT.boxTimeout : (result.exit_code ?? EXIT.boxRefused);
      } catch (err) {
        ctx.exitCode = ctx.output.error(err, EXIT.boxRefused);
      }
    });
}

function registerProcess(box: Command, getCtx: GetContext): void {
  const proc = box.command('process').description('managed processes: long-running commands in a session, with stdin/stdout kept for attach');
  proc
    .command('start')
    .description('start a managed process (the session is created on demand)')
    .argument('<command...>', 'the command and its arguments, after --')
    .requiredOption('--session <id>', 'session')
    .requiredOption('--id <id>', 'process id within the session')
    .option('--env <K=V>', 'environment variable (repeatable)', collect)
    .option('--cwd <dir>', 'working directory inside the box (default /workspace)')
    .action(async (command: string[], raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(ProcessFlagsSchema, raw);
      const box = await openBox(ctx);
      const [cmd, ...args] = command;
      const info = await box.startProcess(flags.session, {
        process_id: flags.id,
        command: cmd ?? '',
        args,
        env: parseKeyValues(flags.env, '--env'),
        ...(flags.cwd ? { cwd: flags.cwd } : {}),
      });
      ctx.output.item(shapes.BoxProcess, info, (i) => `started ${i.process_id} in session ${i.session_id}`);
    });
  proc
    .command('stop')
    .description('stop a managed process and remove it from the session')
    .requiredOption('--session <id>', 'session')
    .requiredOption('--id <id>', 'process id')
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(ProcessFlagsSchema, raw);
      const box = await openBox(ctx);
      await box.stopProcess(flags.session, flags.id);
      ctx.output.item(shapes.BoxProcessStopped, { stopped: flags.id, session_id: flags.session }, () => `stopped ${flags.id}`);
    });
  proc
    .command('status')
    .description('show a managed process: status, exit code, stderr preview')
    .requiredOption('--session <id>', 'session')
    .requiredOption('--id <id>', 'process id')
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(ProcessFlagsSchema, raw);
      const box = await openBox(ctx);
      const info = box.processStatus(flags.session, flags.id);
      ctx.output.item(shapes.BoxProcess, info, (i) =>
        [
          `${i.process_id}: ${i.status}${i.exit_code !== null ? ` (exit ${i.exit_code})` : ''}`,
          `command: ${[i.command, ...i.args].join(' ')}`,
          i.stderr_preview ? `stderr:\n${i.stderr_preview}` : '',
        ]
          .filter(Boolean)
          .join('\n'),
      );
    });
}

function registerAttach(box: Command, getCtx: GetContext): void {
  box
    .command('attach')
    .description("connect the terminal to a managed process's stdin/stdout (end of input closes its stdin; Ctrl-C detaches)")
    .requiredOption('--session <id>', 'session')
    .requiredOption('--id <id>', 'process id')
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(ProcessFlagsSchema, raw);
      const box = await openBox(ctx);
      const conn = await box.attach(flags.session, flags.id);
      const { pumpAttachment } = await import('../runtime/box/attach-client.js');
      // Attached output is the process's own bytes, passed through as they come (not a result).
      const code = await pumpAttachment(conn, { input: process.stdin, output: process.stdout, signal: ctx.signal });
      if (code !== null) ctx.exitCode = code;
    });
}

export function registerBox(program: Command, getCtx: GetContext): void {
  const box = program.command('box').description('Sandboxed execution: box sessions, managed processes');
  registerExec(box, getCtx);

  box
    .command('sessions')
    .description('list box sessions')
    .action(async () => {
      const ctx = getCtx();
      const sessions = await (await openBox(ctx)).sessions();
      ctx.output.list(shapes.BoxSession, sessions, (list) =>
        list.length === 0
          ? 'no box sessions'
          : table([
              ['SESSION', 'BACKEND', 'NETWORK', 'PROCESSES', 'CREATED', 'LAST USED'],
              ...list.map((s) => [s.session_id, s.backend, s.network, String(s.managed_processes), localIso(s.created_at), localIso(s.last_used_at)]),
            ]),
      );
    });

  box
    .command('rm')
    .description('remove a box session and everything running in it')
    .argument('<session>', 'session id')
    .action(async (session: string) => {
      const ctx = getCtx();
      await (await openBox(ctx)).removeSession(session);
      ctx.output.item(shapes.Removed, { ok: true, removed: session }, () => `removed ${session}`);
    });

  box
    .command('status')
    .description('box availability, backend and counts')
    .action(async () => {
      const ctx = getCtx();
      const box = await createBoxService({ dataDir: ctx.flags.dataDir, config: ctx.configFile().config.box, warn: (m) => ctx.output.warn(m) });
      if (ctx.configFile().config.box.enabled) await box.reapExpired();
      const status = await box.status();
      ctx.output.item(shapes.BoxStatus, status, (s) =>
        [
          `available: ${s.available}${s.connector_error ? ` (${s.connector_error})` : ''}`,
          `enabled: ${s.enabled}`,
          `backend: ${s.backend.name ?? '-'}${s.backend.limits_mode ? ` (limits: ${s.backend.limits_mode})` : ''}${s.backend.seccomp ? ` (seccomp: ${s.backend.seccomp})` : ''}`,
          `profile: ${s.profile}`,
          `sessions: ${s.active_sessions}, managed processes: ${s.managed_processes}, session TTL: ${s.session_ttl_sec} s`,
          `recent errors: ${s.recent_error_count}`,
          ...(s.quota_stops ?? []).map((q) => `stopped: session ${q.session_id} at ${q.stopped_at}: error[${q.code}]: ${q.message}`),
        ].join('\n'),
      );
    });

  box
    .command('errors')
    .description('the most recent box errors (oldest first)')
    .action(async () => {
      const ctx = getCtx();
      const box = await createBoxService({ dataDir: ctx.flags.dataDir, config: ctx.configFile().config.box });
      ctx.output.list(shapes.BoxError, box.errors(), (list) =>
        list.length === 0 ? 'no box errors' : list.map((e) => `${e.timestamp} ${e.code} ${e.message}`).join('\n'),
      );
    });

  box
    .command('profiles')
    .description('the built-in box profiles')
    .action(() => {
      const ctx = getCtx();
      const list = Object.values(PROFILES).map((p) => ({ ...p, locked: [...p.locked] }));
      ctx.output.list(shapes.BoxProfile, list, (l) =>
        table([
          ['PROFILE', 'NETWORK', 'CPUS', 'MEMORY', 'PIDS', 'RO ROOT', 'TIMEOUT', 'MAX', 'LOCKED'],
          ...l.map((p) => [
            p.name,
            p.network,
            String(p.cpus),
            `${p.memory_mb}M`,
            String(p.pids_limit),
            String(p.read_only_rootfs),
            String(p.timeout_sec),
            String(p.max_timeout_sec),
            p.locked.join(',') || '-',
          ]),
        ]),
      );
    });

  registerProcess(box, getCtx);
  registerAttach(box, getCtx);
  registerBoxServe(box, getCtx);
}
