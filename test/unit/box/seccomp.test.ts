// The seccomp program: a tiny classic-BPF interpreter runs it against syscall records, so every rule
// is checked by behaviour, not by bytes.
import { describe, expect, it } from 'vitest';
import { CLONE_NAMESPACE_FLAGS, DENIED_SYSCALLS, buildSeccompFilter, deniedSyscallNames, type SeccompArch } from '../../../src/core/box/seccomp.js';

const ARCH = { x64: 0xc000003e, arm64: 0xc00000b7 } as const;
const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const ENOSYS = 0x00050026;
const KILL = 0x80000000;

/** Runs a classic BPF seccomp program over {nr, arch, args}; supports the opcodes a filter uses. */
function run(prog: Buffer, nr: number, arch: number, args: number[] = []): number {
  const data = Buffer.alloc(64);
  data.writeUInt32LE(nr, 0);
  data.writeUInt32LE(arch, 4);
  args.forEach((a, i) => data.writeUInt32LE(a >>> 0, 16 + i * 8));
  let acc = 0;
  for (let pc = 0; pc < prog.length / 8; pc++) {
    const code = prog.readUInt16LE(pc * 8);
    const jt = prog.readUInt8(pc * 8 + 2);
    const jf = prog.readUInt8(pc * 8 + 3);
    const k = prog.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) acc = data.readUInt32LE(k);
    else if (code === 0x06) return k;
    else if (code === 0x15) pc += acc === k ? jt : jf;
    else if (code === 0x35) pc += acc >= k ? jt : jf;
    else if (code === 0x45) pc += (acc & k) !== 0 ? jt : jf;
    else throw new Error(`unexpected opcode ${code}`);
  }
  throw new Error('fell off the end of the program');
}

describe.each(['x64', 'arm64'] as SeccompArch[])('seccomp filter (%s)', (arch) => {
  const prog = buildSeccompFilter(arch);

  it('refuses every listed syscall with EPERM and allows others', () => {
    for (const [name, nrs] of Object.entries(DENIED_SYSCALLS)) {
      const nr = nrs[arch];
      if (nr === null) continue;
      expect(run(prog, nr, ARCH[arch]), name).toBe(EPERM);
    }
    // read, write, openat, getpid on both
    const allowed = arch === 'x64' ? [0, 1, 257, 39] : [63, 64, 56, 172];
    for (const nr of allowed) expect(run(prog, nr, ARCH[arch])).toBe(ALLOW);
  });

  it('refuses clone with namespace flags, allows plain clone, and answers clone3 with ENOSYS', () => {
    const clone = arch === 'x64' ? 56 : 220;
    expect(run(prog, clone, ARCH[arch], [0x10000000])).toBe(EPERM);
    expect(run(prog, clone, ARCH[arch], [CLONE_NAMESPACE_FLAGS])).toBe(EPERM);
    expect(run(prog, clone, ARCH[arch], [0x01200011])).toBe(ALLOW);
    expect(run(prog, 435, ARCH[arch])).toBe(ENOSYS);
  });

  it('kills a syscall made under another architecture', () => {
    expect(run(prog, 0, arch === 'x64' ? ARCH.arm64 : ARCH.x64)).toBe(KILL);
  });

  it('names what it refuses', () => {
    expect(deniedSyscallNames(arch)).toEqual(
      expect.arrayContaining(['unshare', 'mount', 'keyctl', 'bpf', 'ptrace', 'userfaultfd', 'perf_event_open', 'io_uring_setup', 'init_module']),
    );
  });
});

it('refuses x32 syscalls on x86_64', () => {
  expect(run(buildSeccompFilter('x64'), 0x40000000 + 1, ARCH.x64)).toBe(EPERM);
});
