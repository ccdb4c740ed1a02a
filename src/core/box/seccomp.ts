// The box's seccomp filter as a classic BPF program (the bytes `bwrap --seccomp` and lbot's exec
// helper load). A deny-list in the style of Docker's default profile: everything a sandboxed program
// needs is allowed, the kernel's attack surface for escapes is refused with EPERM.

export type SeccompArch = 'x64' | 'arm64';

/** AUDIT_ARCH_* values: the filter refuses (kills) any syscall made under another ABI. */
const AUDIT_ARCH: Record<SeccompArch, number> = { x64: 0xc000003e, arm64: 0xc00000b7 };

/** Syscalls refused with EPERM, with their numbers per architecture (null: not on that one). */
export const DENIED_SYSCALLS: Readonly<Record<string, { x64: number | null; arm64: number | null; why: string }>> = {
  unshare: { x64: 272, arm64: 97, why: 'new namespaces (nested user namespaces among them)' },
  setns: { x64: 308, arm64: 268, why: 'joining other namespaces' },
  mount: { x64: 165, arm64: 40, why: 'mounting' },
  umount2: { x64: 166, arm64: 39, why: 'unmounting' },
  pivot_root: { x64: 155, arm64: 41, why: 'changing the root mount' },
  chroot: { x64: 161, arm64: 51, why: 'changing the root' },
  open_tree: { x64: 428, arm64: 428, why: 'new mount API' },
  move_mount: { x64: 429, arm64: 429, why: 'new mount API' },
  fsopen: { x64: 430, arm64: 430, why: 'new mount API' },
  fsconfig: { x64: 431, arm64: 431, why: 'new mount API' },
  fsmount: { x64: 432, arm64: 432, why: 'new mount API' },
  fspick: { x64: 433, arm64: 433, why: 'new mount API' },
  mount_setattr: { x64: 442, arm64: 442, why: 'new mount API' },
  keyctl: { x64: 250, arm64: 219, why: 'kernel keyrings are not namespaced' },
  add_key: { x64: 248, arm64: 217, why: 'kernel keyrings are not namespaced' },
  request_key: { x64: 249, arm64: 218, why: 'kernel keyrings are not namespaced' },
  bpf: { x64: 321, arm64: 280, why: 'eBPF programs' },
  ptrace: { x64: 101, arm64: 117, why: 'tracing other processes' },
  process_vm_readv: { x64: 310, arm64: 270, why: 'reading other processes’ memory' },
  process_vm_writev: { x64: 311, arm64: 271, why: 'writing other processes’ memory' },
  kcmp: { x64: 312, arm64: 272, why: 'comparing other processes’ kernel state' },
  pidfd_getfd: { x64: 438, arm64: 438, why: 'stealing other processes’ file descriptors' },
  userfaultfd: { x64: 323, arm64: 282, why: 'a common kernel exploit primitive' },
  perf_event_open: { x64: 298, arm64: 241, why: 'performance counters leak kernel state' },
  io_uring_setup: { x64: 425, arm64: 425, why: 'io_uring bypasses syscall filtering' },
  io_uring_enter: { x64: 426, arm64: 426, why: 'io_uring bypasses syscall filtering' },
  io_uring_register: { x64: 427, arm64: 427, why: 'io_uring bypasses syscall filtering' },
  init_module: { x64: 175, arm64: 105, why: 'kernel modules' },
  finit_module: { x64: 313, arm64: 273, why: 'kernel modules' },
  delete_module: { x64: 176, arm64: 106, why: 'kernel modules' },
  kexec_load: { x64: 246, arm64: 104, why: 'loading a new kernel' },
  kexec_file_load: { x64: 320, arm64: 294, why: 'loading a new kernel' },
  open_by_handle_at: { x64: 304, arm64: 265, why: 'opening files outside the mount tree by handle' },
  name_to_handle_at: { x64: 303, arm64: 264, why: 'file handles' },
  swapon: { x64: 167, arm64: 224, why: 'host swap' },
  swapoff: { x64: 168, arm64: 225, why: 'host swap' },
  reboot: { x64: 169, arm64: 142, why: 'host power state' },
  syslog: { x64: 103, arm64: 116, why: 'the kernel log' },
  acct: { x64: 163, arm64: 89, why: 'process accounting' },
  quotactl: { x64: 179, arm64: 60, why: 'host quotas' },
  quotactl_fd: { x64: 443, arm64: 443, why: 'host quotas' },
  lookup_dcookie: { x64: 212, arm64: 18, why: 'kernel profiling' },
  settimeofday: { x64: 164, arm64: 170, why: 'the host clock' },
  clock_settime: { x64: 227, arm64: 112, why: 'the host clock' },
  clock_adjtime: { x64: 305, arm64: 266, why: 'the host clock' },
  adjtimex: { x64: 159, arm64: 171, why: 'the host clock' },
  vhangup: { x64: 153, arm64: 58, why: 'terminal hang-up' },
  iopl: { x64: 172, arm64: null, why: 'I/O port access' },
  ioperm: { x64: 173, arm64: null, why: 'I/O port access' },
  uselib: { x64: 134, arm64: null, why: 'obsolete loader call' },
  ustat: { x64: 136, arm64: null, why: 'obsolete' },
  sysfs: { x64: 139, arm64: null, why: 'obsolete' },
  _sysctl: { x64: 156, arm64: null, why: 'obsolete' },
  nfsservctl: { x64: 180, arm64: 42, why: 'obsolete' },
  create_module: { x64: 174, arm64: null, why: 'obsolete kernel modules' },
  get_kernel_syms: { x64: 177, arm64: null, why: 'obsolete kernel modules' },
  query_module: { x64: 178, arm64: null, why: 'obsolete kernel modules' },
};

/** clone() with any of these flags makes namespaces; refused like unshare (CLONE_NEW*). */
export const CLONE_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080;

const CLONE = { x64: 56, arm64: 220 } as const;
/** clone3 passes its flags in memory a filter cannot read: it answers ENOSYS, and libc falls back to clone. */
const CLONE3 = 435;
/** x32 ABI syscalls on x86_64 carry this bit; they would bypass the number checks. */
const X32_SYSCALL_BIT = 0x40000000;

const EPERM = 1;
const ENOSYS = 38;
const RET_KILL_PROCESS = 0x80000000;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;

// BPF opcodes (linux/filter.h)
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;

/** seccomp_data offsets: nr, arch, then args[] (little-endian: the low word of each arg first). */
const OFF_NR = 0;
const OFF_ARCH = 4;
const OFF_ARG0_LOW = 16;

type Insn = { code: number; jt: number | string; jf: number | string; k: number } | { label: string };

export function seccompArchFor(nodeArch: string): SeccompArch | null {
  if (nodeArch === 'x64') return 'x64';
  if (nodeArch === 'arm64') return 'arm64';
  return null;
}

/** The names the filter refuses on one architecture (for `lbot box status` and docs). */
export function deniedSyscallNames(arch: SeccompArch): string[] {
  return Object.entries(DENIED_SYSCALLS)
    .filter(([, v]) => v[arch] !== null)
    .map(([k]) => k);
}

/** Resolves label jumps into relative offsets and encodes struct sock_filter[] (8 bytes each). */
function assemble(program: Insn[]): Buffer {
  const insns: { code: number; jt: number | string; jf: number | string; k: number }[] = [];
  const labels = new Map<string, number>();
  for (const i of program) {
    if ('label' in i) labels.set(i.label, insns.length);
    else insns.push(i);
  }
  const out = Buffer.alloc(insns.length * 8);
  insns.forEach((i, idx) => {
    const rel = (j: number | string): number => {
      if (typeof j === 'number') return j;
      const at = labels.get(j);
      if (at === undefined) throw new Error(`seccomp: unknown label ${j}`);
      const off = at - idx - 1;
      if (off < 0 || off > 255) throw new Error(`seccomp: jump to ${j} out of range (${off})`);
      return off;
    };
    out.writeUInt16LE(i.code, idx * 8);
    out.writeUInt8(rel(i.jt), idx * 8 + 2);
    out.writeUInt8(rel(i.jf), idx * 8 + 3);
    out.writeUInt32LE(i.k >>> 0, idx * 8 + 4);
  });
  return out;
}

/** Builds the filter for one architecture. */
export function buildSeccompFilter(arch: SeccompArch): Buffer {
  const p: Insn[] = [
    { code: LD_W_ABS, jt: 0, jf: 0, k: OFF_ARCH },
    { code: JEQ_K, jt: 1, jf: 0, k: AUDIT_ARCH[arch] },
    { code: RET_K, jt: 0, jf: 0, k: RET_KILL_PROCESS },
    { code: LD_W_ABS, jt: 0, jf: 0, k: OFF_NR },
  ];
  if (arch === 'x64') p.push({ code: JGE_K, jt: 'eperm', jf: 0, k: X32_SYSCALL_BIT });
  for (const v of Object.values(DENIED_SYSCALLS)) {
    const nr = v[arch];
    if (nr !== null) p.push({ code: JEQ_K, jt: 'eperm', jf: 0, k: nr });
  }
  p.push({ code: JEQ_K, jt: 'clone', jf: 0, k: CLONE[arch] });
  p.push({ code: JEQ_K, jt: 'enosys', jf: 0, k: CLONE3 });
  p.push({ code: RET_K, jt: 0, jf: 0, k: RET_ALLOW });
  p.push({ label: 'clone' });
  p.push({ code: LD_W_ABS, jt: 0, jf: 0, k: OFF_ARG0_LOW });
  p.push({ code: JSET_K, jt: 'eperm', jf: 0, k: CLONE_NAMESPACE_FLAGS });
  p.push({ code: RET_K, jt: 0, jf: 0, k: RET_ALLOW });
  p.push({ label: 'eperm' });
  p.push({ code: RET_K, jt: 0, jf: 0, k: RET_ERRNO | EPERM });
  p.push({ label: 'enosys' });
  p.push({ code: RET_K, jt: 0, jf: 0, k: RET_ERRNO | ENOSYS });
  return assemble(p);
}
