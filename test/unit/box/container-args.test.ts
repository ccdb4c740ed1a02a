// docker/podman argument building (box.md §6.3; §14.7 items 59-61).
import { describe, expect, it } from 'vitest';
import { buildExecArgs, buildListArgs, buildRunArgs, containerName, wrapForContainer } from '../../../src/runtime/box/container-args.js';
import { buildSpec } from '../../../src/core/box/spec.js';
import { getProfile } from '../../../src/core/box/profiles.js';

const spec = (req: Record<string, unknown> = {}) =>
  buildSpec({ session_id: 'Sess 1', cmd: 'true', image: 'alpine:3', ...req }, { profile: getProfile('default') });
const run = (req: Record<string, unknown> = {}) =>
  buildRunArgs({
    cli: 'docker',
    name: 'lbot-box-x-1',
    spec: spec(req),
    instanceId: 'inst',
    owner: 'own',
    workspaceDir: '/ws',
    user: '1000:1000',
    storageQuota: false,
    nodeBinary: null,
  });

describe('container backend args', () => {
  it('builds run -d with labels, limits, hardening, the image and the idle keeper', () => {
    const a = run();
    expect(a.slice(0, 3)).toEqual(['docker', 'run', '-d']);
    expect(a).toContain('--rm');
    for (const l of ['lbot.box=true', 'lbot.session_id=Sess 1', 'lbot.box.instance_id=inst', 'lbot.box.owner=own']) expect(a).toContain(l);
    expect(a.join(' ')).toContain('--network none');
    expect(a.join(' ')).toContain('--cpus 1 --memory 512m --pids-limit 128');
    expect(a.join(' ')).toContain('--read-only --tmpfs /tmp:size=64m');
    expect(a).toContain('--cap-drop=ALL');
    expect(a).toContain('--security-opt=no-new-privileges');
    expect(a.join(' ')).toContain('--user 1000:1000');
    expect(a.slice(-4)).toEqual(['alpine:3', 'sh', '-c', 'while true; do sleep 3600; done']);
  });

  it('omits --rm for persistent sessions, --network for network on, --read-only for writable roots', () => {
    const a = run({ persistent: true, network: 'on', read_only_rootfs: false });
    expect(a).not.toContain('--rm');
    expect(a).not.toContain('--network');
    expect(a).not.toContain('--read-only');
  });

  it('mounts the host path and extra mounts, skipping mode none', () => {
    const a = run({
      host_path: '/h',
      host_path_mode: 'ro',
      extra_mounts: [
        { host_path: '/e', mount_path: '/mnt/e', mode: 'rw' },
        { host_path: '/n', mount_path: '/mnt/n', mode: 'none' },
      ],
    }).join(' ');
    expect(a).toContain('-v /h:/workspace:ro');
    expect(a).toContain('-v /e:/mnt/e:rw');
    expect(a).not.toContain('/mnt/n');
  });

  it('passes env with -e and wraps the command with the quoted workdir', () => {
    expect(buildExecArgs('podman', 'c1', { A: '1' }, wrapForContainer('/w x', 'ls'))).toEqual([
      'podman',
      'exec',
      '-e',
      'A=1',
      'c1',
      'sh',
      '-c',
      "mkdir -p '/w x' && cd '/w x' && ls",
    ]);
    expect(buildExecArgs('docker', 'c1', {}, 'x', true)).toContain('-i');
  });

  it('normalises container names: lower case, ≤ 32 chars of body, 8-hex suffix, session when empty', () => {
    expect(containerName('My Session!', 'abcd1234')).toBe('lbot-box-my-session-abcd1234');
    expect(containerName('???', 'abcd1234')).toBe('lbot-box-session-abcd1234');
    expect(containerName('x'.repeat(80), 'abcd1234')).toBe(`lbot-box-${'x'.repeat(32)}-abcd1234`);
    expect(containerName('s')).toMatch(/^lbot-box-s-[0-9a-f]{8}$/);
  });

  it('lists only containers of this owner for orphan cleanup', () => {
    expect(buildListArgs('docker', 'own').join(' ')).toContain('label=lbot.box.owner=own');
  });
});
