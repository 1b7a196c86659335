// The seccomp filter of the local sandbox driver: a classic-BPF program that bubblewrap loads
// (`--seccomp FD`) just before it runs a command, refusing the system calls a sandboxed command has
// no use for and that widen what of the kernel it can reach.
//
// What it refuses follows the default profiles of container runtimes (Docker's and Podman's) for a
// process without capabilities, written as a deny list (everything else is allowed):
// - kernel modules, kexec, reboot, swap, quotas, accounting, the clock, `syslog`, `vhangup`;
// - mounts, old and new API (`mount`, `umount2`, `pivot_root`, `fsopen`…`mount_setattr`, `open_tree`);
// - namespaces: `setns`, `unshare` and `clone` with a new-namespace flag, `clone3` (its flags are in
//   memory a filter cannot read: it answers ENOSYS, and the C library falls back to `clone`);
// - looking into other processes: `ptrace`, `process_vm_readv/writev`, `process_madvise`, `kcmp`,
//   `pidfd_getfd`;
// - kernel keyrings, `bpf`, `perf_event_open`, `userfaultfd`, `io_uring_*`, `lookup_dcookie`,
//   `name_to_handle_at`/`open_by_handle_at`, `nfsservctl`;
// - on x86_64: `iopl`, `ioperm`, `uselib`, `ustat`, `sysfs`, `_sysctl` and the module calls of old;
// - `personality` other than the ordinary ones (Linux, 32-bit Linux, `uname26`, the query);
// - every other ABI: on x86_64 the x32 calls are refused too, and a 32-bit (i386, arm32) call, from a
//   32-bit program or `int 0x80`, kills the process (the numbers differ there, so a deny list written
//   for the native numbers would let anything through).
// A refused call fails with EPERM (the process goes on, and a shell prints "Operation not permitted"),
// except `clone3` (ENOSYS, see above) and foreign ABIs (killed).
//
// Why written here: no package in the npm registry builds seccomp programs, and Debian's libseccomp
// is a C library (its tools compile nothing either) that would need a compiler on every user's
// machine. The program is small, table driven, and checks the architecture first.

/** seccomp_data offsets (the kernel's `struct seccomp_data`). */
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16; // little-endian: the low 32 bits of args[0]

// Classic BPF opcodes.
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;

const RET_ALLOW = 0x7fff0000;
const RET_KILL_PROCESS = 0x80000000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;

/** CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET. */
const CLONE_NEW = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;
/** …and CLONE_NEWTIME, which only `unshare` takes (in `clone` those bits are the exit signal). */
const UNSHARE_NEW = CLONE_NEW | 0x00000080;
/** personality() values allowed: PER_LINUX, PER_LINUX32, UNAME26, both, and the query (0xffffffff). */
const PERSONALITIES = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff];

export type SeccompArch = 'x64' | 'arm64';

const AUDIT_ARCH: Record<SeccompArch, number> = { x64: 0xc000003e, arm64: 0xc00000b7 };
/** x86_64's x32 ABI: the same audit arch, numbers with this bit set. */
const X32_SYSCALL_BIT = 0x40000000;

/** System calls refused outright: name, x86_64 number, aarch64 number (null: not on that arch). */
const REFUSED: readonly (readonly [string, number | null, number | null])[] = [
  ['acct', 163, 89],
  ['add_key', 248, 217],
  ['bpf', 321, 280],
  ['clock_adjtime', 305, 266],
  ['clock_settime', 227, 112],
  ['create_module', 174, null],
  ['delete_module', 176, 106],
  ['finit_module', 313, 273],
  ['fsconfig', 431, 431],
  ['fsmount', 432, 432],
  ['fsopen', 430, 430],
  ['fspick', 433, 433],
  ['get_kernel_syms', 177, null],
  ['init_module', 175, 105],
  ['io_uring_enter', 426, 426],
  ['io_uring_register', 427, 427],
  ['io_uring_setup', 425, 425],
  ['ioperm', 173, null],
  ['iopl', 172, null],
  ['kcmp', 312, 272],
  ['kexec_file_load', 320, 294],
  ['kexec_load', 246, 104],
  ['keyctl', 250, 219],
  ['lookup_dcookie', 212, 18],
  ['mount', 165, 40],
  ['mount_setattr', 442, 442],
  ['move_mount', 429, 429],
  ['name_to_handle_at', 303, 264],
  ['nfsservctl', 180, 42],
  ['open_by_handle_at', 304, 265],
  ['open_tree', 428, 428],
  ['perf_event_open', 298, 241],
  ['pidfd_getfd', 438, 438],
  ['pivot_root', 155, 41],
  ['process_madvise', 440, 440],
  ['process_vm_readv', 310, 270],
  ['process_vm_writev', 311, 271],
  ['ptrace', 101, 117],
  ['query_module', 178, null],
  ['quotactl', 179, 60],
  ['quotactl_fd', 443, 443],
  ['reboot', 169, 142],
  ['request_key', 249, 218],
  ['setns', 308, 268],
  ['settimeofday', 164, 170],
  ['swapoff', 168, 225],
  ['swapon', 167, 224],
  ['syslog', 103, 116],
  ['_sysctl', 156, null],
  ['sysfs', 139, null],
  ['umount2', 166, 39],
  ['uselib', 134, null],
  ['userfaultfd', 323, 282],
  ['ustat', 136, null],
  ['vhangup', 153, 58],
];

/** System calls allowed only with some arguments (checked in blocks after the table). */
const CHECKED = {
  clone: [56, 220],
  unshare: [272, 97],
  personality: [135, 92],
  clone3: [435, 435],
} as const;

/** The names of the system calls the filter refuses outright (for the docs and tests). */
export const refusedSyscalls = (arch: SeccompArch): string[] =>
  REFUSED.filter(([, x64, arm64]) => (arch === 'x64' ? x64 : arm64) !== null).map(([name]) => name);

type Target = number | string; // a relative jump, or a label
type Item = { label: string } | { code: number; jt: Target; jf: Target; k: number };

/** The architecture a program is built for on this machine, or null where there is none. */
export function nativeSeccompArch(arch: string = process.arch): SeccompArch | null {
  return arch === 'x64' || arch === 'arm64' ? arch : null;
}

/**
 * This machine's filter, or null where Hangar has none for its architecture: `warn` then says that
 * `who` (what would run under it) runs without one.
 */
export function nativeSeccompProgram(who: string, warn?: (message: string) => void): Buffer | null {
  const arch = nativeSeccompArch();
  if (arch) return seccompProgram(arch);
  warn?.(`no seccomp filter for this architecture (${process.arch}; Hangar has one for x64 and arm64): ${who} run without one`);
  return null;
}

/**
 * What to log when a command that only runs `true` failed under the filter, given what bubblewrap
 * `said`: a warning when the kernel refused the filter itself (bubblewrap names PR_SET_SECCOMP then),
 * so that `who` runs without it (`setting` turns it off on purpose); undefined for any other failure
 * (a busy host, bubblewrap unable to run at all), which keeps the filter.
 */
export function seccompRefusal(said: string, who: string, setting: string): string | undefined {
  if (!/seccomp/i.test(said)) return undefined;
  return `the kernel refused the seccomp filter of ${who} (bubblewrap said: ${said.trim().slice(0, 300)}): they run without it, no system call refused; set ${setting}=false to run without it on purpose`;
}

/**
 * The filter for `arch`, as bubblewrap reads it: an array of `struct sock_filter` (8 bytes each:
 * u16 code, u8 jt, u8 jf, u32 k), in the machine's byte order (little-endian on both).
 */
export function seccompProgram(arch: SeccompArch): Buffer {
  const nr = (pair: readonly [number, number]) => (arch === 'x64' ? pair[0] : pair[1]);
  const items: Item[] = [];
  const ins = (code: number, k: number, jt: Target = 0, jf: Target = 0) => items.push({ code, jt, jf, k });
  const label = (name: string) => items.push({ label: name });

  ins(LD_W_ABS, ARCH);
  ins(JEQ_K, AUDIT_ARCH[arch], 0, 'kill');
  ins(LD_W_ABS, NR);
  if (arch === 'x64') ins(JGE_K, X32_SYSCALL_BIT, 'eperm', 0);
  for (const [, x64, arm64] of REFUSED) {
    const n = arch === 'x64' ? x64 : arm64;
    if (n !== null) ins(JEQ_K, n, 'eperm', 0);
  }
  ins(JEQ_K, nr(CHECKED.clone3), 'enosys', 0);
  ins(JEQ_K, nr(CHECKED.clone), 'clone', 0);
  ins(JEQ_K, nr(CHECKED.unshare), 'unshare', 0);
  ins(JEQ_K, nr(CHECKED.personality), 'personality', 0);
  ins(RET_K, RET_ALLOW);
  // Argument checks (jumps go forward only, so the returns come last).
  label('clone');
  ins(LD_W_ABS, ARG0_LOW);
  ins(JSET_K, CLONE_NEW, 'eperm', 'allow');
  label('unshare');
  ins(LD_W_ABS, ARG0_LOW);
  ins(JSET_K, UNSHARE_NEW, 'eperm', 'allow');
  label('personality');
  ins(LD_W_ABS, ARG0_LOW);
  for (const p of PERSONALITIES) ins(JEQ_K, p, 'allow', 0);
  label('eperm');
  ins(RET_K, RET_ERRNO | EPERM);
  label('allow');
  ins(RET_K, RET_ALLOW);
  label('enosys');
  ins(RET_K, RET_ERRNO | ENOSYS);
  label('kill');
  ins(RET_K, RET_KILL_PROCESS);

  // Resolve labels to relative jumps (forward only, at most 255 instructions: classic BPF's rule).
  const at = new Map<string, number>();
  const code: Exclude<Item, { label: string }>[] = [];
  for (const item of items) {
    if ('label' in item) at.set(item.label, code.length);
    else code.push(item);
  }
  const out = Buffer.alloc(code.length * 8);
  code.forEach((insn, i) => {
    const rel = (t: Target) => {
      const off = typeof t === 'number' ? t : at.get(t)! - (i + 1);
      if (!(off >= 0 && off <= 255)) throw new Error(`seccomp: jump ${String(t)} out of range at ${i}`);
      return off;
    };
    out.writeUInt16LE(insn.code, i * 8);
    out.writeUInt8(rel(insn.jt), i * 8 + 2);
    out.writeUInt8(rel(insn.jf), i * 8 + 3);
    out.writeUInt32LE(insn.k >>> 0, i * 8 + 4);
  });
  return out;
}
