// Profiles and the merge order profile → request → locked → timeout clamp (box.md §3, §14.5 item 48).
import { describe, expect, it } from 'vitest';
import { applyProfile, getProfile, PROFILES } from '../../../src/core/box/profiles.js';
import { buildSpec } from '../../../src/core/box/spec.js';
import { LbotError } from '../../../src/core/errors.js';

const spec = (req: Record<string, unknown>, profile = 'default') => buildSpec({ session_id: 's', cmd: 'true', ...req }, { profile: getProfile(profile) });

describe('box profiles', () => {
  it('has the four built-in profiles', () => {
    expect(Object.keys(PROFILES).sort()).toEqual(['default', 'network_basic', 'network_extended', 'offline_readonly']);
  });

  it('applies profile defaults when the request omits a field', () => {
    const s = spec({});
    expect(s).toMatchObject({
      network: 'off',
      timeout_sec: 30,
      cpus: 1,
      memory_mb: 512,
      pids_limit: 128,
      read_only_rootfs: true,
      workspace_quota_mb: 0,
      host_path_mode: 'rw',
    });
  });

  it('lets the request override unlocked fields', () => {
    expect(spec({ timeout_sec: 60, network: 'on' })).toMatchObject({ timeout_sec: 60, network: 'on' });
  });

  it('forces locked fields of offline_readonly despite the request (AC-097)', () => {
    const s = spec({ network: 'on', host_path_mode: 'rw', read_only_rootfs: false }, 'offline_readonly');
    expect(s).toMatchObject({ network: 'off', host_path_mode: 'ro', read_only_rootfs: true, cpus: 0.5, memory_mb: 256, pids_limit: 64 });
  });

  it.each([999, '999', 999.0])('clamps timeout %s to the profile maximum (AC-093 variant)', (t) => {
    expect(spec({ timeout_sec: t }).timeout_sec).toBe(120);
    expect(spec({ timeout_sec: t }, 'offline_readonly').timeout_sec).toBe(60);
    expect(spec({ timeout_sec: t }, 'network_extended').timeout_sec).toBe(300);
  });

  it('leaves a non-numeric timeout to validation', () => {
    expect(applyProfile({ timeout_sec: 'soon' }, getProfile('default')).timeout_sec).toBe('soon');
    expect(() => spec({ timeout_sec: 'soon' })).toThrow(/timeout_sec must be an integer/);
  });

  it('gives network_extended 2 CPUs, 1024 MB and a writable root', () => {
    expect(spec({}, 'network_extended')).toMatchObject({ cpus: 2, memory_mb: 1024, read_only_rootfs: false, network: 'on', pids_limit: 256 });
  });

  it('refuses an unknown profile with the list of available ones', () => {
    try {
      getProfile('nope');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(LbotError);
      expect((err as LbotError).code).toBe('box.validation');
      expect((err as LbotError).message).toContain('default, offline_readonly, network_basic, network_extended');
    }
  });
});
