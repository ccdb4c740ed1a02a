// bwrap argument building for holders and execs (box.md §6.6; §14.7 item 65).
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildEnterArgv, buildExecScript, buildHolderArgv, orderMounts, KEEPER_SCRIPT, type HolderPlan } from '../../../src/runtime/box/bwrap-args.js';

const plan = (over: Partial<HolderPlan> = {}): HolderPlan => ({
  bwrap: '/usr/bin/bwrap',
  uid: 1000,
  gid: 1000,
  network: 'off',
  readOnlyRoot: true,
  disableUserns: true,
  systemLinks: [
    { path: '/bin', target: 'usr/bin' },
    { path: '/lib64', target: null },
  ],
  tmpDir: '/s/tmp',
  homeDir: '/s/home',
  workspaceDir: '/s/workspace',
  mountPath: '/workspace',
  hostPath: null,
  extraMounts: [],
  stateDir: '/s/state',
  passwdFile: '/s/passwd',
  groupFile: '/s/group',
  nodeBinary: '/usr/bin/node',
  keeper: { ttlSec: 300, intervalSec: 30 },
  seccomp: { fd: 5, filterFile: '/s/seccomp.bpf', helperFile: '/s/seccomp-exec' },
  stage: null,
  volume: null,
  ...over,
});

function pairs(argv: string[], flag: string): string[][] {
  const out: string[][] = [];
  argv.forEach((a, i) => {
    if (a === flag) out.push(argv.slice(i + 1, i + 3));
  });
  return out;
}

describe('holder argv', () => {
  it('loads the seccomp filter from its fd and binds the filter and helper for execs', () => {
    const a = buildHolderArgv(plan());
    expect(pairs(a, '--seccomp')[0]?.[0]).toBe('5');
    expect(pairs(a, '--ro-bind')).toContainEqual(['/s/seccomp.bpf', '/.lbot/seccomp.bpf']);
    expect(pairs(a, '--ro-bind')).toContainEqual(['/s/seccomp-exec', '/.lbot/seccomp-exec']);
  });

  it('as root, binds the staged sources as root (one mount -a over an fstab in the stage dir) then drops privileges before bwrap', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'lbot-stage-'));
    try {
      const binds = [
        { source: '/data/skills/x', target: '/s/stage/0' },
        { source: '/data/my skills\\tab\there', target: '/s/stage/1' },
      ];
      const a = buildHolderArgv(plan({ stage: { uid: 65534, gid: 65534, dir, binds } }), '/usr/bin/unshare', '/usr/bin/setpriv');
      expect(a.slice(0, 5)).toEqual(['/usr/bin/unshare', '--mount', '--propagation', 'private', '--']);
      const script = a[7] ?? '';
      expect(script).toContain('mount -a --fstab "$1" || exit 97');
      expect(script).toContain('/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups');
      const fstab = a[9] ?? '';
      expect(path.dirname(fstab)).toBe(dir);
      // Spaces, tabs and backslashes are octal escapes: a path cannot add a field or a line.
      expect(readFileSync(fstab, 'utf8')).toBe('/data/skills/x /s/stage/0 none bind 0 0\n/data/my\\040skills\\134tab\\011here /s/stage/1 none bind 0 0\n');
      expect(statSync(fstab).mode & 0o777).toBe(0o600);
      expect(a.indexOf('/usr/bin/bwrap')).toBeGreaterThan(a.indexOf(fstab));
      // The same binds share one file.
      expect(buildHolderArgv(plan({ stage: { uid: 65534, gid: 65534, dir, binds } }), '/usr/bin/unshare', '/usr/bin/setpriv')[9]).toBe(fstab);
      expect(readdirSync(dir)).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('unshares the network iff network is off; resolv.conf only with network on', () => {
    const off = buildHolderArgv(plan());
    const on = buildHolderArgv(plan({ network: 'on' }));
    expect(off).toContain('--unshare-net');
    expect(on).not.toContain('--unshare-net');
    expect(off.join(' ')).not.toContain('/etc/resolv.conf');
    expect(on.join(' ')).toContain('--ro-bind-try /etc/resolv.conf /etc/resolv.conf');
  });

  it('owns user, pid, ipc and uts namespaces, hardens, and keeps no host env', () => {
    const a = buildHolderArgv(plan());
    for (const f of ['--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--new-session', '--disable-userns', '--clearenv'])
      expect(a).toContain(f);
    expect(buildHolderArgv(plan({ disableUserns: false }))).not.toContain('--disable-userns');
  });

  it('remounts / read-only after every mount, only when asked', () => {
    const a = buildHolderArgv(plan({ extraMounts: [{ host_path: '/h/x', mount_path: '/mnt/x', mode: 'ro' }] }));
    const remount = a.indexOf('--remount-ro');
    expect(remount).toBeGreaterThan(a.lastIndexOf('--bind'));
    expect(remount).toBeGreaterThan(a.indexOf('/mnt/x'));
    expect(buildHolderArgv(plan({ readOnlyRoot: false }))).not.toContain('--remount-ro');
  });

  it('binds the host path ro or rw, else the session workspace', () => {
    expect(pairs(buildHolderArgv(plan({ hostPath: { path: '/p', mode: 'ro' } })), '--ro-bind')).toContainEqual(['/p', '/workspace']);
    expect(pairs(buildHolderArgv(plan({ hostPath: { path: '/p', mode: 'rw' } })), '--bind')).toContainEqual(['/p', '/workspace']);
    expect(pairs(buildHolderArgv(plan()), '--bind')).toContainEqual(['/s/workspace', '/workspace']);
  });

  it('orders extra mounts parents first and skips mode none', () => {
    const ordered = orderMounts([
      { host_path: '/c', mount_path: '/a/b/c', mode: 'ro' },
      { host_path: '/n', mount_path: '/none', mode: 'none' },
      { host_path: '/a', mount_path: '/a', mode: 'rw' },
      { host_path: '/b', mount_path: '/a/b', mode: 'ro' },
    ]);
    expect(ordered.map((m) => m.mount_path)).toEqual(['/a', '/a/b', '/a/b/c']);
  });

  it('re-creates merged-/usr symlinks and binds real directories', () => {
    const a = buildHolderArgv(plan());
    expect(a.join(' ')).toContain('--symlink usr/bin /bin');
    expect(a.join(' ')).toContain('--ro-bind-try /lib64 /lib64');
  });

  it('runs the idle keeper with the TTL and reports namespace info on fd 3', () => {
    const a = buildHolderArgv(plan());
    expect(a.slice(-6)).toEqual(['/bin/sh', '-c', KEEPER_SCRIPT, 'lbot-keeper', '300', '30']);
    expect(a).toContain('--info-fd');
  });

  it('wraps the holder to mount a size-limited volume for tmp, home and the workspace', () => {
    const a = buildHolderArgv(plan({ volume: { volumeDir: '/s/volume', sizeBytes: 1234 } }), '/usr/bin/unshare');
    expect(a.slice(0, 6)).toEqual(['/usr/bin/unshare', '--user', '--map-root-user', '--mount', '--propagation', 'private']);
    expect(a.join(' ')).toContain('size=1234');
    expect(pairs(a, '--bind')).toContainEqual(['/s/volume/workspace', '/workspace']);
    expect(pairs(a, '--bind')).toContainEqual(['/s/volume/tmp', '/tmp']);
  });
});

describe('exec argv and script', () => {
  it('enters every namespace of the holder with no-new-privileges', () => {
    const a = buildEnterArgv({ setpriv: '/usr/bin/setpriv', nsenter: '/usr/bin/nsenter' }, 42, 'true');
    expect(a.slice(0, 5)).toEqual(['/usr/bin/setpriv', '--no-new-privs', '/usr/bin/nsenter', '--target', '42']);
    for (const f of ['--user', '--mount', '--pid', '--net', '--ipc', '--uts', '--preserve-credentials']) expect(a).toContain(f);
    expect(a.slice(-6)).toEqual(['/.lbot/seccomp-exec', '/.lbot/seccomp.bpf', '/bin/sh', '-c', 'true', 'sh']);
  });

  it('as root, drops to the sandbox uid with no capabilities before entering', () => {
    const a = buildEnterArgv({ setpriv: '/usr/bin/setpriv', nsenter: '/usr/bin/nsenter' }, 42, 'true', { runAs: { uid: 65534, gid: 65534 } });
    expect(buildEnterArgv({ setpriv: 's', nsenter: 'n' }, 42, 'true', { network: 'on' })).not.toContain('--net');
    expect(a.slice(0, 6)).toEqual(['/usr/bin/setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all', '--bounding-set=-all']);
    expect(a.indexOf('--no-new-privs')).toBeLessThan(a.indexOf('/usr/bin/nsenter'));
  });

  it('exports the caller environment inside the script, quoted', () => {
    const s = buildExecScript({ workdir: '/w', cmd: 'env', limits: { fileBytes: 1024, openFiles: 1 }, gate: false, env: { A: "it's $(id)", B: '2' } });
    expect(s.split('\n')[0]).toBe(`export A='it'\\''s $(id)'; export B=2`);
  });

  it('gates on fd 3, applies rlimits, enters the workdir, then runs the command', () => {
    const s = buildExecScript({
      workdir: "/workspace/it's",
      cmd: 'echo hi',
      limits: { fileBytes: 512 * 1024, openFiles: 256, dataMb: 64, processes: { count: 32, flag: '-p' } },
      gate: true,
    });
    const lines = s.split('\n');
    expect(lines[0]).toBe('read -r _ <&3 || exit 125; exec 3<&-');
    expect(lines[1]).toBe('ulimit -f 1024 && ulimit -n 256 && ulimit -d 65536 && ulimit -p 32 || exit 125');
    expect(lines[2]).toContain(`cd '/workspace/it'\\''s'`);
    expect(lines[3]).toBe('echo hi');
    expect(buildExecScript({ workdir: '/w', cmd: 'x', limits: { fileBytes: 1024, openFiles: 1 }, gate: false })).not.toContain('read -r');
  });

  it('rlimit mode: a CPU-time limit, and every limit must hold (a refused one stops the command)', () => {
    const s = buildExecScript({ workdir: '/w', cmd: 'x', limits: { fileBytes: 1024, openFiles: 1, cpuSeconds: 65 }, gate: false });
    expect(s.split('\n')[0]).toBe('ulimit -f 2 && ulimit -n 1 && ulimit -t 65 || exit 125');
  });
});
