// Argument building for the docker/podman CLI backend (box.md §6.3), with lbot's hardening flags.
import { createHash, randomBytes } from 'node:crypto';
import type { BoxSpec } from '../../core/box/model.js';
import { shQuote } from '../../core/box/shell.js';
import { orderMounts } from './bwrap-args.js';

export const LABEL_BOX = 'lbot.box';
export const LABEL_SESSION = 'lbot.session_id';
export const LABEL_INSTANCE = 'lbot.box.instance_id';
export const LABEL_OWNER = 'lbot.box.owner';
export const IDLE_KEEPER = 'while true; do sleep 3600; done';

/** `lbot-box-<normalised id>-<8 hex>`: lower-case, ≤ 32 characters of body, `session` when empty. */
export function containerName(sessionId: string, suffix = randomBytes(4).toString('hex')): string {
  const body =
    sessionId
      .replace(/[^A-Za-z0-9_.-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .toLowerCase()
      .slice(0, 32) || 'session';
  return `lbot-box-${body}-${suffix}`;
}

/** A stable owner id for labels: which data dir on which machine created the container. */
export function ownerId(hostname: string, dataDir: string): string {
  return createHash('sha256').update(`${hostname}\n${dataDir}`).digest('hex').slice(0, 16);
}

export type RunArgsInput = {
  cli: string;
  name: string;
  spec: BoxSpec;
  instanceId: string;
  owner: string;
  /** Host dir mounted at the mount path when the spec has no host path. */
  workspaceDir: string;
  user: string;
  storageQuota: boolean;
  nodeBinary: string | null;
};

/** `<cli> run -d …` for a session container (box.md §6.3 plus --cap-drop, no-new-privileges, --user). */
export function buildRunArgs(i: RunArgsInput): string[] {
  const s = i.spec;
  const a = [i.cli, 'run', '-d'];
  if (!s.persistent) a.push('--rm');
  a.push('--name', i.name);
  a.push(
    '--label',
    `${LABEL_BOX}=true`,
    '--label',
    `${LABEL_SESSION}=${s.session_id}`,
    '--label',
    `${LABEL_INSTANCE}=${i.instanceId}`,
    '--label',
    `${LABEL_OWNER}=${i.owner}`,
  );
  if (s.network === 'off') a.push('--network', 'none');
  a.push('--cpus', String(s.cpus), '--memory', `${s.memory_mb}m`, '--pids-limit', String(s.pids_limit));
  if (s.read_only_rootfs) a.push('--read-only', '--tmpfs', '/tmp:size=64m');
  if (s.host_path !== null && s.host_path_mode !== 'none') a.push('-v', `${s.host_path}:${s.mount_path}:${s.host_path_mode}`);
  else if (s.host_path === null) a.push('-v', `${i.workspaceDir}:${s.mount_path}:rw`);
  for (const m of orderMounts(s.extra_mounts)) a.push('-v', `${m.host_path}:${m.mount_path}:${m.mode}`);
  if (i.nodeBinary) a.push('-v', `${i.nodeBinary}:/.lbot/node:ro`);
  a.push('--cap-drop=ALL', '--security-opt=no-new-privileges', '--user', i.user);
  if (i.storageQuota && s.workspace_quota_mb > 0) a.push('--storage-opt', `size=${s.workspace_quota_mb}m`);
  a.push(s.image, 'sh', '-c', IDLE_KEEPER);
  return a;
}

/** `<cli> exec [-i] [-e K=V]… <container> sh -c <script>`. */
export function buildExecArgs(cli: string, container: string, env: Record<string, string>, script: string, interactive = false): string[] {
  const a = [cli, 'exec'];
  if (interactive) a.push('-i');
  for (const [k, v] of Object.entries(env)) a.push('-e', `${k}=${v}`);
  a.push(container, 'sh', '-c', script);
  return a;
}

/** The reference's wrapped command: `mkdir -p W && cd W && CMD` with the workdir quoted. */
export function wrapForContainer(workdir: string, cmd: string): string {
  const w = shQuote(workdir);
  return `mkdir -p ${w} && cd ${w} && ${cmd}`;
}

export function buildInspectArgs(cli: string, container: string): string[] {
  return [cli, 'inspect', '-f', '{{.State.Running}}', container];
}

export function buildListArgs(cli: string, owner: string): string[] {
  return [cli, 'ps', '-a', '--filter', `label=${LABEL_OWNER}=${owner}`, '--format', '{{.Names}}\t{{.Label "lbot.box.instance_id"}}'];
}

export function buildRemoveArgs(cli: string, containers: readonly string[]): string[] {
  return [cli, 'rm', '-f', ...containers];
}
