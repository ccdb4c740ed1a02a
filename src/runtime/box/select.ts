// Backend construction and selection (box.md §6.2): auto = bwrap → docker → podman; host only by name.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { BoxConfig } from '../../core/config.js';
import { unavailableError } from '../../core/box/errors.js';
import type { BackendName } from '../../core/box/model.js';
import { BwrapBackend } from './bwrap.js';
import { privilegedBaseDir } from './bwrap-mounts.js';
import { ContainerBackend } from './container.js';
import { HostBackend } from './host-backend.js';
import type { BoxLayout } from './layout.js';
import type { BackendProbe, SandboxBackend } from './backend.js';

export const AUTO_ORDER: readonly BackendName[] = ['bwrap', 'docker', 'podman'];

export type BackendSet = Record<BackendName, SandboxBackend>;

/**
 * Builds one instance of every backend for this data dir (probes run lazily, once per instance).
 * `warn` receives the bwrap limits warning (rlimit fallback); without it the warning goes to stderr.
 */
export function createBackends(layout: BoxLayout, config: BoxConfig, opts: { instanceId?: string; warn?: (message: string) => void } = {}): BackendSet {
  const instanceId = opts.instanceId ?? randomBytes(6).toString('hex');
  const nodeBinary = process.execPath;
  const privileged = process.getuid?.() === 0;
  const baseDir = config.bwrap.base_dir ? path.resolve(config.bwrap.base_dir) : privileged ? privilegedBaseDir(layout.root) : layout.bwrapDir;
  return {
    bwrap: new BwrapBackend({
      bin: config.bwrap.bin,
      baseDir,
      limits: config.bwrap.limits,
      nodeBinary,
      ...(opts.warn ? { warn: opts.warn } : {}),
      sandboxUid: config.bwrap.sandbox_uid,
      sandboxGid: config.bwrap.sandbox_gid,
      execAgent: config.bwrap.exec_agent,
    }),
    docker: new ContainerBackend('docker', path.join(layout.root, 'docker'), layout.dataDir, instanceId, nodeBinary),
    podman: new ContainerBackend('podman', path.join(layout.root, 'podman'), layout.dataDir, instanceId, nodeBinary),
    host: new HostBackend(layout.hostDir),
  };
}

export type Selection = { backend: SandboxBackend; probe: BackendProbe };

/** Picks the backend named by config (or a per-command override); fails closed with box.unavailable. */
export async function selectBackend(backends: BackendSet, config: Pick<BoxConfig, 'enabled' | 'backend'>, override?: BackendName | null): Promise<Selection> {
  if (!config.enabled) {
    throw unavailableError(
      'disabled',
      'box is disabled in config (box.enabled = false)',
      'set box.enabled to true in lbot.config.json (or unset LBOT__BOX__ENABLED)',
    );
  }
  const name = override ?? config.backend;
  if (name === 'auto') {
    const reasons: string[] = [];
    for (const candidate of AUTO_ORDER) {
      const probe = await backends[candidate].probe();
      if (probe.available) return { backend: backends[candidate], probe };
      reasons.push(`${candidate}: ${probe.reason}`);
    }
    throw unavailableError(
      'backend_missing',
      `no sandbox backend is available (${reasons.join('; ')})`,
      'install bubblewrap (apt-get install -y bubblewrap) or a container engine; the host backend runs without isolation and is used only with --backend host',
    );
  }
  const probe = await backends[name].probe();
  if (!probe.available) throw unavailableError('backend_missing', `the configured box backend "${name}" is unavailable: ${probe.reason}`);
  return { backend: backends[name], probe };
}
