// BoxSpec building and validation (box.md §2.3, §4; §14.5 items 49, 50).
import { describe, expect, it } from 'vitest';
import { getProfile } from '../../../src/core/box/profiles.js';
import { absolutePath, buildSpec, isUnderPath } from '../../../src/core/box/spec.js';
import { firstDifference } from '../../../src/core/box/compat.js';
import type { SessionInfo } from '../../../src/core/box/model.js';

const defaults = { profile: getProfile('default') };
const build = (req: Record<string, unknown>, d: Parameters<typeof buildSpec>[1] = defaults) => buildSpec({ session_id: 's', cmd: 'true', ...req }, d);

describe('buildSpec', () => {
  it.each([
    [{ cpus: 0 }, /cpus must be greater than 0/],
    [{ memory_mb: 10 }, /memory_mb must be >= 32/],
    [{ pids_limit: 0 }, /pids_limit must be greater than 0/],
    [{ workspace_quota_mb: -1 }, /workspace_quota_mb must be >= 0/],
    [{ session_id: '  ' }, /session_id must not be empty/],
    [{ workdir: 'relative' }, /workdir must be an absolute path/],
    [{ network: 'maybe' }, /network must be "on" or "off"/],
    [{ env: { 'BAD-NAME': 'x' } }, /not a shell identifier/],
    [{ mount_path: '/a/../b' }, /must not contain '\.\.'/],
  ])('rejects %j', (req, message) => {
    expect(() => build(req)).toThrow(message);
  });

  it('defaults the workdir to the mount path', () => {
    expect(build({ mount_path: '/data' }).workdir).toBe('/data');
    expect(build({}).workdir).toBe('/workspace');
  });

  it('requires the workdir under the mount path when a host path is mounted', () => {
    expect(() => build({ host_path: '/srv/x', workdir: '/opt' })).toThrow(/workdir must stay under mount_path/);
    expect(build({ host_path: '/srv/x', workdir: '/workspace/sub' }).workdir).toBe('/workspace/sub');
    expect(build({ host_path: '/srv/x', mount_path: '/data', workdir: '/data/x' }).workdir).toBe('/data/x');
  });

  it('allows any absolute workdir with host_path_mode none', () => {
    expect(build({ host_path: '/srv/x', host_path_mode: 'none', workdir: '/opt' }).workdir).toBe('/opt');
  });

  it('coerces numeric strings and integral floats', () => {
    expect(build({ memory_mb: '64', pids_limit: 32.0, cpus: '0.5' })).toMatchObject({ memory_mb: 64, pids_limit: 32, cpus: 0.5 });
  });

  it('takes the config quota and image when the request names none', () => {
    const s = build({}, { ...defaults, workspace_quota_mb: 32, image: 'alpine:3' });
    expect(s.workspace_quota_mb).toBe(32);
    expect(s.image).toBe('alpine:3');
    expect(build({ workspace_quota_mb: 5, image: 'x' }, { ...defaults, workspace_quota_mb: 32, image: 'alpine:3' })).toMatchObject({
      workspace_quota_mb: 5,
      image: 'x',
    });
  });

  it('mounts the shared workspace when configured and none is requested', () => {
    expect(build({}, { ...defaults, shared_workspace: '/srv/shared' }).host_path).toBe('/srv/shared');
  });

  it('refuses duplicate extra mount paths and one equal to the primary mount', () => {
    expect(() =>
      build({
        extra_mounts: [
          { host_path: '/a', mount_path: '/m' },
          { host_path: '/b', mount_path: '/m' },
        ],
      }),
    ).toThrow(/used twice/);
    expect(() => build({ extra_mounts: [{ host_path: '/a', mount_path: '/workspace' }] })).toThrow(/used twice/);
  });

  it('keeps env values as strings', () => {
    expect(build({ env: { A: 1, B: 'x' } }).env).toEqual({ A: '1', B: 'x' });
  });
});

describe('path helpers', () => {
  it('isUnderPath compares whole components, never string prefixes', () => {
    expect(isUnderPath('/a/b', '/a/b')).toBe(true);
    expect(isUnderPath('/a/b/c', '/a/b')).toBe(true);
    expect(isUnderPath('/a/bc', '/a/b')).toBe(false);
    expect(isUnderPath('/x', '/')).toBe(true);
  });
  it('absolutePath normalises and refuses relative paths', () => {
    expect(absolutePath('/a//b/', 'p')).toBe('/a/b');
    expect(() => absolutePath('a', 'p')).toThrow(/absolute/);
  });
});

describe('compatibility (box.md §5.3)', () => {
  const spec = build({});
  const info: SessionInfo = { ...spec, backend_name: 'bwrap', backend_session_id: 'x', created_at: '', last_used_at: '' };
  it('matches an identical spec and ignores cmd, workdir, timeout and env', () => {
    expect(firstDifference(info, { ...spec, cmd: 'other', workdir: '/workspace/x', timeout_sec: 5, env: { A: 'b' } })).toBeNull();
  });
  it.each([
    'network',
    'image',
    'host_path',
    'host_path_mode',
    'mount_path',
    'persistent',
    'cpus',
    'memory_mb',
    'pids_limit',
    'read_only_rootfs',
    'workspace_quota_mb',
  ] as const)('reports a different %s', (field) => {
    const changed = {
      ...spec,
      [field]: typeof spec[field] === 'number' ? Number(spec[field]) + 1 : typeof spec[field] === 'boolean' ? !spec[field] : `${String(spec[field])}x`,
    };
    expect(firstDifference(info, changed)?.field).toBe(field);
  });
  it('compares extra mounts regardless of order', () => {
    const a = { host_path: '/a', mount_path: '/ma', mode: 'ro' as const };
    const b = { host_path: '/b', mount_path: '/mb', mode: 'ro' as const };
    expect(firstDifference({ ...info, extra_mounts: [a, b] }, { ...spec, extra_mounts: [b, a] })).toBeNull();
    expect(firstDifference({ ...info, extra_mounts: [a] }, { ...spec, extra_mounts: [a, b] })?.field).toBe('extra_mounts');
  });
});
