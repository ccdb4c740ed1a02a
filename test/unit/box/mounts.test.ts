// Host-mount policy by resolved real path (box.md §9.1, §9.2; acceptance AC-100, AC-101).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LbotError } from '../../../src/core/errors.js';
import {
  assertNoSymlinkOnPath,
  createMountPolicy,
  deniedReason,
  validateHostDir,
  validateMountPath,
  validateSpecMounts,
} from '../../../src/core/box/mounts.js';
import { buildSpec } from '../../../src/core/box/spec.js';
import { getProfile } from '../../../src/core/box/profiles.js';

const created: string[] = [];
function tmp(): string {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'lbot-mounts-')));
  created.push(dir);
  return dir;
}
afterAll(() => {
  for (const d of created) rmSync(d, { recursive: true, force: true });
});

function code(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof LbotError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('mount policy', () => {
  it('accepts a directory under an allowed root and refuses one outside, naming the roots', () => {
    const root = tmp();
    const allowed = path.join(root, 'allowed');
    mkdirSync(path.join(allowed, 'proj'), { recursive: true });
    mkdirSync(path.join(root, 'other'));
    const policy = createMountPolicy([allowed], {});
    expect(validateHostDir(path.join(allowed, 'proj'), policy)).toBe(path.join(allowed, 'proj'));
    const out = code(() => validateHostDir(path.join(root, 'other'), policy));
    expect(out.code).toBe('box.mount_denied');
    expect(out.message).toContain(allowed);
  });

  it('compares by path components, not string prefix', () => {
    const root = tmp();
    mkdirSync(path.join(root, 'ab'));
    mkdirSync(path.join(root, 'a'));
    const policy = createMountPolicy([path.join(root, 'a')], {});
    expect(code(() => validateHostDir(path.join(root, 'ab'), policy)).code).toBe('box.mount_denied');
  });

  it('refuses a symlink inside an allowed root that escapes it', () => {
    const root = tmp();
    const allowed = path.join(root, 'allowed');
    mkdirSync(allowed);
    mkdirSync(path.join(root, 'secret'));
    symlinkSync(path.join(root, 'secret'), path.join(allowed, 'link'));
    symlinkSync('/etc', path.join(allowed, 'etc'));
    const policy = createMountPolicy([allowed], {});
    expect(code(() => validateHostDir(path.join(allowed, 'link'), policy)).code).toBe('box.mount_denied');
    expect(code(() => validateHostDir(path.join(allowed, 'etc'), policy)).message).toContain('blocked for security');
  });

  it('drops / and denied roots from the allowlist with a warning (AC-101)', () => {
    const warnings: string[] = [];
    const policy = createMountPolicy(['/', '/etc', '/nonexistent-lbot-dir'], { warn: (m) => warnings.push(m) });
    expect(policy.allowedRoots).toEqual([]);
    expect(warnings).toHaveLength(3);
    for (const p of ['/', '/etc', '/proc', '/sys', '/dev', '/root', '/boot', '/var/run/docker.sock', '/run/docker.sock']) {
      expect(code(() => validateHostDir(p, policy)).code, p).toBe('box.mount_denied');
    }
  });

  it('switches host mounts off with an empty allowlist and says so', () => {
    const dir = tmp();
    const out = code(() => validateHostDir(dir, createMountPolicy([], {})));
    expect(out.code).toBe('box.mount_denied');
    expect(out.message).toContain('host mounts are switched off');
  });

  it('reports a missing directory as a validation error', () => {
    const root = tmp();
    const out = code(() => validateHostDir(path.join(root, 'missing'), createMountPolicy([root], {})));
    expect(out.code).toBe('box.validation');
    expect(out.message).toContain('existing directory');
  });

  it('denies system roots exactly, secret dirs under home, and the data dir', () => {
    expect(deniedReason('/usr', { home: null, protectedPaths: [] })).not.toBeNull();
    expect(deniedReason('/usr/share/doc', { home: null, protectedPaths: [] })).toBeNull();
    expect(deniedReason('/home/u', { home: '/home/u', protectedPaths: [] })).not.toBeNull();
    expect(deniedReason('/home/u/.ssh/keys', { home: '/home/u', protectedPaths: [] })).not.toBeNull();
    expect(deniedReason('/home/u/proj', { home: '/home/u', protectedPaths: [] })).toBeNull();
    expect(deniedReason('/p/.lbot/box', { home: null, protectedPaths: ['/p/.lbot'] })).not.toBeNull();
    expect(deniedReason('/p', { home: null, protectedPaths: ['/p/.lbot'] })).toBeNull();
  });

  it('refuses mount paths that shadow sandbox system directories', () => {
    for (const p of ['/', '/proc', '/usr/local', '/etc', '/.lbot/state']) expect(() => validateMountPath(p, 'mount_path')).toThrow(/shadow/);
    expect(() => validateMountPath('/mnt/data', 'mount_path')).not.toThrow();
  });

  it('checks extra mounts like the primary one and pins real paths (AC-100 variant)', () => {
    const root = tmp();
    const proj = path.join(root, 'proj');
    mkdirSync(proj);
    symlinkSync(proj, path.join(root, 'alias'));
    const policy = createMountPolicy([root], {});
    const spec = (extra: unknown) => buildSpec({ session_id: 's', cmd: 'true', extra_mounts: extra }, { profile: getProfile('default') });
    expect(code(() => validateSpecMounts(spec([{ host_path: '/etc', mount_path: '/mnt/etc', mode: 'ro' }]), policy)).code).toBe('box.mount_denied');
    const ok = validateSpecMounts(spec([{ host_path: path.join(root, 'alias'), mount_path: '/mnt/p', mode: 'ro' }]), policy);
    expect(ok.extra_mounts[0]?.host_path).toBe(proj);
  });

  it('checks skill mounts against the skills root and forces them read-only', () => {
    const root = tmp();
    const skills = path.join(root, 'skills');
    mkdirSync(path.join(skills, 'hello'), { recursive: true });
    const policy = createMountPolicy([], { skillsRoot: skills });
    const spec = (host: string) =>
      buildSpec(
        { session_id: 's', cmd: 'true', extra_mounts: [{ host_path: host, mount_path: '/workspace/.skills/hello', mode: 'rw' }] },
        { profile: getProfile('default') },
      );
    expect(validateSpecMounts(spec(path.join(skills, 'hello')), policy).extra_mounts[0]?.mode).toBe('ro');
    expect(code(() => validateSpecMounts(spec(root), policy)).code).toBe('box.mount_denied');
  });

  it('refuses nested mount targets that pass through a symlink in a host workspace', () => {
    const root = tmp();
    symlinkSync('/etc', path.join(root, 'link'));
    expect(() => assertNoSymlinkOnPath(root, 'link/sub', 'mount')).toThrow(/symlink/);
    expect(() => assertNoSymlinkOnPath(root, 'plain/sub', 'mount')).not.toThrow();
  });
});
