// The docker/podman CLI backend: a labelled container per session, execs through `<cli> exec`.
import { mkdirSync, rmSync, chownSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { LbotError } from '../../core/errors.js';
import { argvToCommand } from '../../core/box/shell.js';
import { measureUsage } from '../../core/box/quota.js';
import type { BoxSpec, ManagedProcessSpec } from '../../core/box/model.js';
import { childEnv } from '../process/env.js';
import { findExecutable, probeCommand } from './host-tools.js';
import { runProcess, type RunOutcome } from './run-process.js';
import { buildExecArgs, buildInspectArgs, buildListArgs, buildRemoveArgs, buildRunArgs, containerName, ownerId, wrapForContainer } from './container-args.js';
import {
  execRunOptions,
  type BackendProbe,
  type QuotaWatchPlan,
  type ExecRequest,
  type ProcessLaunch,
  type SandboxBackend,
  type SessionRecord,
  type StartContext,
} from './backend.js';

const ContainerStateSchema = z.strictObject({ container: z.string(), dir: z.string(), workspace_dir: z.string() });
type ContainerState = z.infer<typeof ContainerStateSchema>;

function collapse(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > 300 ? `${t.slice(0, 297)}...` : t;
}

export class ContainerBackend implements SandboxBackend {
  readonly #cli: string;
  readonly #owner: string;
  #probe: Promise<BackendProbe> | undefined;

  constructor(
    readonly name: 'docker' | 'podman',
    readonly baseDir: string,
    readonly dataDir: string,
    readonly instanceId: string,
    readonly nodeBinary: string | null,
  ) {
    this.#cli = name;
    this.#owner = ownerId(os.hostname(), dataDir);
  }

  probe(): Promise<BackendProbe> {
    this.#probe ??= (async () => {
      const bin = findExecutable(this.#cli);
      if (!bin) return { available: false, reason: `${this.#cli} is not installed (no ${this.#cli} on PATH)` };
      const info = await probeCommand([bin, 'info'], 5000);
      if (!info.ok) return { available: false, reason: `the ${this.#cli} engine does not answer: ${info.detail || 'info failed'}` };
      return { available: true, reason: `${this.#cli} engine reachable`, limits_mode: 'engine', seccomp: 'engine' };
    })();
    return this.#probe;
  }

  async #cliRun(args: string[], timeoutMs: number): Promise<string> {
    const r = await probeCommand(args, timeoutMs);
    if (!r.ok)
      throw new LbotError('box.unavailable', `${this.name} backend error: ${collapse(r.output || r.detail)}`, { details: { reason: 'connect_failed' } });
    return r.output;
  }

  #state(record: SessionRecord): ContainerState {
    const s = ContainerStateSchema.safeParse(record.backend_state);
    if (!s.success) throw new LbotError('box.validation', `session ${record.info.session_id} has a damaged ${this.name} record; remove it with lbot box rm`);
    return s.data;
  }

  async startSession(spec: BoxSpec, _ctx: StartContext): Promise<{ backend_session_id: string; state: Record<string, unknown> }> {
    const name = containerName(spec.session_id);
    const dir = path.join(this.baseDir, name);
    const workspaceDir = path.join(dir, 'workspace');
    mkdirSync(workspaceDir, { recursive: true, mode: 0o755 });
    const uid = process.getuid?.() ?? 1000;
    const gid = process.getgid?.() ?? 1000;
    const user = uid === 0 ? '1000:1000' : `${uid}:${gid}`;
    if (uid === 0) chownSync(workspaceDir, 1000, 1000);
    const args = buildRunArgs({
      cli: this.#cli,
      name,
      spec,
      instanceId: this.instanceId,
      owner: this.#owner,
      workspaceDir,
      user,
      storageQuota: false,
      nodeBinary: this.nodeBinary,
    });
    try {
      await this.#cliRun(args, 30_000);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    const state: ContainerState = { container: name, dir, workspace_dir: workspaceDir };
    return { backend_session_id: name, state };
  }

  async exec(record: SessionRecord, req: ExecRequest): Promise<RunOutcome> {
    const { container } = this.#state(record);
    return runProcess({
      argv: buildExecArgs(this.#cli, container, req.env, wrapForContainer(req.workdir, req.cmd), req.stdin !== undefined),
      env: childEnv('helper'),
      ...execRunOptions(req),
    });
  }

  async processLaunch(record: SessionRecord, spec: ManagedProcessSpec): Promise<ProcessLaunch> {
    const { container } = this.#state(record);
    const argv = buildExecArgs(this.#cli, container, spec.env, wrapForContainer(spec.cwd, argvToCommand([spec.command, ...spec.args])), true);
    return { argv, env: childEnv('helper'), cgroups: [], gate: false };
  }

  async isSessionAlive(record: SessionRecord): Promise<boolean> {
    const s = ContainerStateSchema.safeParse(record.backend_state);
    if (!s.success) return false;
    const r = await probeCommand(buildInspectArgs(this.#cli, s.data.container), 5000);
    return r.ok && r.output.trim().toLowerCase() === 'true';
  }

  async stopSession(record: SessionRecord): Promise<void> {
    const s = ContainerStateSchema.safeParse(record.backend_state);
    if (!s.success) return;
    await probeCommand(buildRemoveArgs(this.#cli, [s.data.container]), 20_000);
    rmSync(s.data.dir, { recursive: true, force: true });
  }

  async usage(record: SessionRecord): Promise<number> {
    const s = this.#state(record);
    return measureUsage([record.info.host_path ?? s.workspace_dir]);
  }

  /** The quota watcher stops a container session with `<engine> kill`. */
  quotaWatch(record: SessionRecord): QuotaWatchPlan {
    const s = this.#state(record);
    return { dirs: [record.info.host_path ?? s.workspace_dir], statfs: [], stop: { kind: 'command', argv: [this.#cli, 'kill', s.container] } };
  }

  async cleanupOrphans(known: ReadonlySet<string>): Promise<void> {
    const probe = await this.probe();
    if (!probe.available) return;
    const list = await probeCommand(buildListArgs(this.#cli, this.#owner), 10_000);
    if (!list.ok) return;
    const orphans = list.output
      .split('\n')
      .map((l) => l.split('\t')[0]?.trim() ?? '')
      .filter((n) => n !== '' && !known.has(n));
    if (orphans.length > 0) await probeCommand(buildRemoveArgs(this.#cli, orphans), 30_000);
  }
}
