// The effective spec of a box request: the profile merged under it, the fields validated, every host
// mount checked against the mount policy.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { BoxConfig } from '../../core/config.js';
import type { BoxSpec } from '../../core/box/model.js';
import { assertNoSymlinkOnPath, validateSpecMounts, type MountPolicy } from '../../core/box/mounts.js';
import { getProfile } from '../../core/box/profiles.js';
import { buildSpec, isUnderPath } from '../../core/box/spec.js';
import type { BoxLayout } from './layout.js';
import type { ExecInput } from './service-types.js';

/** The shared default workspace (box.workspace_scope: shared), created on first use. */
function sharedWorkspace(config: BoxConfig, layout: BoxLayout): string | null {
  if (config.workspace_scope !== 'shared') return null;
  const dir = config.default_workspace ? path.resolve(config.default_workspace) : path.join(layout.root, 'default');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

export function effectiveSpec(input: ExecInput, sessionId: string, config: BoxConfig, policy: MountPolicy, layout: BoxLayout): BoxSpec {
  const profile = getProfile(input.profile ?? config.profile);
  const shared = sharedWorkspace(config, layout);
  const { profile: _p, query_id: _q, ...fields } = input;
  let spec = buildSpec(
    { ...fields, session_id: sessionId },
    { profile, image: config.image, workspace_quota_mb: config.workspace_quota_mb, shared_workspace: shared },
  );
  const builtInShared = shared !== null && !config.default_workspace && spec.host_path === shared;
  spec = validateSpecMounts(spec, policy, { skipPrimary: builtInShared });
  for (const m of spec.extra_mounts) {
    if (spec.host_path !== null && spec.host_path_mode !== 'none' && isUnderPath(m.mount_path, spec.mount_path) && m.mount_path !== spec.mount_path) {
      assertNoSymlinkOnPath(spec.host_path, path.posix.relative(spec.mount_path, m.mount_path), `mount ${m.host_path}:${m.mount_path}`);
    }
  }
  return spec;
}
