// The limits probe (box.md §6.6 "Resource limits") on a temp dir standing in for /sys/fs/cgroup:
// cgroup v2 at the root or in a delegated subtree, cgroup v1, and fail-closed / announced fallbacks.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LbotError } from '../../../src/core/errors.js';
import { createSessionCgroup, findCgroupTree, joinCgroup, probeLimits, warnLimitsOnce, type CgroupHost } from '../../../src/runtime/box/limits.js';

const roots: string[] = [];
afterEach(() => {
  while (roots.length > 0) rmSync(roots.pop() ?? '', { recursive: true, force: true });
});

function tempRoot(): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'lbot-cgroup-'));
  roots.push(root);
  return root;
}

/** A cgroup v2 directory with the given files. */
function v2Dir(dir: string, files: { controllers?: string; subtree?: string; procs?: string } = {}): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'cgroup.controllers'), files.controllers ?? 'cpu memory pids');
  writeFileSync(path.join(dir, 'cgroup.subtree_control'), files.subtree ?? '');
  writeFileSync(path.join(dir, 'cgroup.procs'), files.procs ?? '');
}

function host(root: string, over: Partial<CgroupHost> = {}): CgroupHost {
  return { root, selfCgroup: '0::/\n', canWrite: () => true, uid: 1000, systemdUser: false, ...over };
}

const USER_SCOPE = '/user.slice/user-1000.slice/user@1000.service/app.slice/run-1.scope';

/** A systemd-style tree: root-owned up to user-1000.slice, the user's own from user@1000.service down. */
function delegatedTree(root: string, controllers = 'cpu memory pids'): { canWrite: (p: string) => boolean; service: string; appSlice: string; scope: string } {
  v2Dir(root, { subtree: 'cpu memory pids' });
  v2Dir(path.join(root, 'user.slice'), { subtree: 'cpu memory pids' });
  v2Dir(path.join(root, 'user.slice/user-1000.slice'), { subtree: 'cpu memory pids' });
  const service = path.join(root, 'user.slice/user-1000.slice/user@1000.service');
  v2Dir(service, { controllers, subtree: controllers });
  const appSlice = path.join(service, 'app.slice');
  v2Dir(appSlice, { controllers });
  const scope = path.join(root, USER_SCOPE);
  v2Dir(scope, { controllers, procs: '4242\n4243\n' });
  return { canWrite: (p) => p.startsWith(service), service, appSlice, scope };
}

describe('limits probe: cgroup v2', () => {
  it('uses the root of the tree when it is writable (lbot as root)', () => {
    const root = tempRoot();
    v2Dir(root);
    const probe = probeLimits('auto', host(root));
    expect(probe).toMatchObject({ usable: true, plan: { mode: 'cgroup2', base: path.join(root, 'lbot-box'), delegated: false, cpu: true }, warning: null });
    expect(readFileSync(path.join(root, 'cgroup.subtree_control'), 'utf8')).toBe('+memory +pids +cpu');
    expect(existsSync(path.join(root, 'lbot-box'))).toBe(true);
  });

  it('finds a delegated subtree the user owns when the root is not writable, above the scope holding processes', () => {
    const root = tempRoot();
    const t = delegatedTree(root);
    const h = host(root, { selfCgroup: `0::${USER_SCOPE}\n`, canWrite: t.canWrite });
    const probe = probeLimits('cgroup', h);
    expect(probe).toMatchObject({
      usable: true,
      plan: { mode: 'cgroup2', parent: t.appSlice, base: path.join(t.appSlice, 'lbot-box'), delegated: true },
      warning: null,
    });
    if (!probe.usable) throw new Error('unreachable');
    expect(probe.reason).toContain('delegated subtree');
    // The controllers were handed down to the new base.
    expect(readFileSync(path.join(t.appSlice, 'cgroup.subtree_control'), 'utf8')).toBe('+memory +pids +cpu');
    const dirs = createSessionCgroup(probe.plan, 's1_abcd', { cpus: 0.5, memory_mb: 64, pids_limit: 32 });
    expect(dirs).toEqual([path.join(t.appSlice, 'lbot-box', 's1_abcd')]);
    const dir = dirs[0] ?? '';
    expect(readFileSync(path.join(dir, 'memory.max'), 'utf8')).toBe(String(64 * 1024 * 1024));
    expect(readFileSync(path.join(dir, 'pids.max'), 'utf8')).toBe('32');
    expect(readFileSync(path.join(dir, 'cpu.max'), 'utf8')).toBe('50000 100000');
  });

  it('never picks the scope it runs in: a cgroup with processes cannot hand controllers down', () => {
    const root = tempRoot();
    const t = delegatedTree(root);
    // Only the scope itself is writable.
    const h = host(root, { selfCgroup: `0::${USER_SCOPE}\n`, canWrite: (p) => p.startsWith(t.scope) });
    const probe = probeLimits('cgroup', h);
    expect(probe.usable).toBe(false);
    expect(probe.reason).toContain('holds processes');
  });

  it('auto without a usable tree falls back to rlimits with a warning naming what is missing', () => {
    const root = tempRoot();
    const t = delegatedTree(root, 'cpu');
    const probe = probeLimits('auto', host(root, { selfCgroup: `0::${USER_SCOPE}\n`, canWrite: t.canWrite }));
    expect(probe).toMatchObject({ usable: true, plan: { mode: 'rlimit' } });
    if (!probe.usable) throw new Error('unreachable');
    expect(probe.warning).toMatch(/fall back to rlimits/);
    expect(probe.warning).toContain('memory, pids not delegated');
    expect(probe.warning).toContain('RLIMIT_DATA');
    expect(probe.reason).toContain('rlimits, not cgroups');
  });

  it('cgroup without a usable tree is unusable, naming the tree, the uid and that systemd is absent', () => {
    const root = tempRoot();
    v2Dir(root);
    const probe = probeLimits('cgroup', host(root, { selfCgroup: '0::/session-3.scope\n', canWrite: () => false, uid: 1234 }));
    expect(probe.usable).toBe(false);
    expect(probe.reason).toContain('box.bwrap.limits is cgroup');
    expect(probe.reason).toContain(`${root} is not writable by uid 1234`);
    expect(probe.reason).toContain('no systemd user manager');
    const withSystemd = probeLimits('cgroup', host(root, { selfCgroup: '0::/session-3.scope\n', canWrite: () => false, systemdUser: true }));
    expect(withSystemd.reason).toContain('systemd-run --user --scope');
  });

  it('reports a tree that refuses setup instead of using it', () => {
    const root = tempRoot();
    v2Dir(root);
    rmSync(path.join(root, 'cgroup.subtree_control'));
    mkdirSync(path.join(root, 'cgroup.subtree_control'));
    const probe = probeLimits('cgroup', host(root));
    expect(probe.usable).toBe(false);
    expect(probe.reason).toContain('failed');
  });

  it('warns when the cpu controller is missing (cpus not enforced)', () => {
    const root = tempRoot();
    v2Dir(root, { controllers: 'memory pids' });
    const probe = probeLimits('auto', host(root));
    expect(probe).toMatchObject({ usable: true, plan: { mode: 'cgroup2', cpu: false } });
    if (!probe.usable) throw new Error('unreachable');
    expect(probe.warning).toContain('cpus is not enforced');
  });
});

describe('limits probe: cgroup v1', () => {
  function v1Tree(root: string): void {
    for (const c of ['memory', 'pids', 'cpu']) {
      mkdirSync(path.join(root, c, 'process_api', 'job'), { recursive: true });
      writeFileSync(path.join(root, c, 'cgroup.procs'), '');
      writeFileSync(path.join(root, c, 'process_api', 'job', 'cgroup.procs'), '1\n');
    }
  }
  const self = '4:memory:/process_api/job\n8:pids:/process_api/job\n1:cpu,cpuacct:/process_api/job\n0::/\n';

  it('uses the hierarchy roots when writable', () => {
    const root = tempRoot();
    v1Tree(root);
    const probe = probeLimits('cgroup', host(root, { selfCgroup: self }));
    expect(probe).toMatchObject({
      usable: true,
      plan: {
        mode: 'cgroup1',
        memory: path.join(root, 'memory', 'lbot-box'),
        pids: path.join(root, 'pids', 'lbot-box'),
        cpu: path.join(root, 'cpu', 'lbot-box'),
      },
    });
  });

  it("uses this process's own writable cgroups when the roots are not writable", () => {
    const root = tempRoot();
    v1Tree(root);
    const found = findCgroupTree(host(root, { selfCgroup: self, canWrite: (p) => p.includes('process_api') }));
    expect(found).toEqual({
      plan: {
        mode: 'cgroup1',
        memory: path.join(root, 'memory/process_api/job/lbot-box'),
        pids: path.join(root, 'pids/process_api/job/lbot-box'),
        cpu: path.join(root, 'cpu/process_api/job/lbot-box'),
      },
    });
  });

  it('names the hierarchies that are not writable', () => {
    const root = tempRoot();
    v1Tree(root);
    const probe = probeLimits('cgroup', host(root, { selfCgroup: self, canWrite: () => false, uid: 65534 }));
    expect(probe.usable).toBe(false);
    expect(probe.reason).toContain('cgroup v1 memory hierarchy');
    expect(probe.reason).toContain('not writable by uid 65534');
  });
});

describe('limits probe: other cases', () => {
  it('rlimit is used only when configured, and then with a warning', () => {
    const probe = probeLimits('rlimit', host(tempRoot()));
    expect(probe).toMatchObject({ usable: true, plan: { mode: 'rlimit' } });
    if (!probe.usable) throw new Error('unreachable');
    expect(probe.warning).toContain('box.bwrap.limits is rlimit');
  });

  it('a missing cgroup filesystem is named', () => {
    expect(probeLimits('cgroup', host('/nonexistent/cgroup')).reason).toContain('no cgroup filesystem at /nonexistent/cgroup');
  });

  it('warns once per process per message', () => {
    const sink = vi.fn();
    warnLimitsOnce('limits test warning A', sink);
    warnLimitsOnce('limits test warning A', sink);
    expect(sink).toHaveBeenCalledTimes(1);
  });
});

describe('joinCgroup', () => {
  it('writes the pid into every session cgroup', () => {
    const root = tempRoot();
    const a = path.join(root, 'a');
    mkdirSync(a);
    joinCgroup([a], process.pid);
    expect(readFileSync(path.join(a, 'cgroup.procs'), 'utf8')).toBe(String(process.pid));
  });

  it('fails with box.unavailable when the cgroup is gone, instead of leaving the process outside', () => {
    const root = tempRoot();
    const gone = path.join(root, 'gone');
    let err: unknown;
    try {
      joinCgroup([gone], process.pid);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LbotError);
    expect(err).toMatchObject({ code: 'box.unavailable', details: { reason: 'limits_unavailable', cgroup: gone, errno: 'ENOENT' } });
  });

  it('creating a session cgroup in a tree that refuses it is box.unavailable', () => {
    const root = tempRoot();
    writeFileSync(path.join(root, 'lbot-box'), 'not a directory');
    expect(() =>
      createSessionCgroup({ mode: 'cgroup1', memory: path.join(root, 'lbot-box'), pids: path.join(root, 'lbot-box'), cpu: null }, 'k', {
        cpus: 1,
        memory_mb: 64,
        pids_limit: 8,
      }),
    ).toThrow(expect.objectContaining({ code: 'box.unavailable' }));
  });
});
