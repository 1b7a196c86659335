// The seccomp programs, run through a small classic-BPF interpreter for both architectures: the
// aarch64 one cannot run on the x86_64 development machine (the x86_64 one runs for real in
// test/sandbox/security.test.ts). Numbers from the kernel's headers (asm/unistd_64.h for x86_64,
// asm-generic/unistd.h for aarch64).
import { describe, expect, it } from 'vitest';
import { refusedSyscalls, seccompProgram, type SeccompArch } from './seccomp.js';

const ARCH = { x64: 0xc000003e, arm64: 0xc00000b7, i386: 0x40000003, arm: 0x40000028 };
const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const ENOSYS = 0x00050026;
const KILL = 0x80000000;

/** Run `program` on one call: its number, audit arch and first argument (low 32 bits). */
function run(program: Buffer, nr: number, arch: number, arg0 = 0): number {
  const data = Buffer.alloc(64);
  data.writeInt32LE(nr, 0);
  data.writeUInt32LE(arch, 4);
  data.writeUInt32LE(arg0 >>> 0, 16);
  let a = 0;
  for (let pc = 0; pc * 8 < program.length; pc++) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) a = data.readUInt32LE(k);
    else if (code === 0x06) return k;
    else if (code === 0x15) pc += a === k ? jt : jf;
    else if (code === 0x35) pc += a >= k ? jt : jf;
    else if (code === 0x45) pc += (a & k) !== 0 ? jt : jf;
    else throw new Error(`unknown opcode ${code}`);
  }
  throw new Error('fell off the end');
}

const cases: Record<SeccompArch, { allowed: Record<string, number>; refused: Record<string, number>; clone: number; clone3: number; unshare: number; personality: number; foreign: number }> = {
  x64: {
    allowed: { read: 0, write: 1, openat: 257, execve: 59, mmap: 9, wait4: 61, getpid: 39, mbind: 237, set_mempolicy: 238 },
    refused: { ptrace: 101, mount: 165, keyctl: 250, bpf: 321, perf_event_open: 298, userfaultfd: 323, setns: 308, io_uring_setup: 425, iopl: 172, kexec_load: 246, init_module: 175, open_by_handle_at: 304, reboot: 169 },
    clone: 56,
    clone3: 435,
    unshare: 272,
    personality: 135,
    foreign: ARCH.i386,
  },
  arm64: {
    allowed: { read: 63, write: 64, openat: 56, execve: 221, mmap: 222, wait4: 260, getpid: 172, mbind: 235, set_mempolicy: 237 },
    refused: { ptrace: 117, mount: 40, keyctl: 219, bpf: 280, perf_event_open: 241, userfaultfd: 282, setns: 268, io_uring_setup: 425, kexec_load: 104, init_module: 105, open_by_handle_at: 265, reboot: 142 },
    clone: 220,
    clone3: 435,
    unshare: 97,
    personality: 92,
    foreign: ARCH.arm,
  },
};

describe.each(['x64', 'arm64'] as const)('the seccomp program for %s', (arch) => {
  const program = seccompProgram(arch);
  const c = cases[arch];
  const native = ARCH[arch];

  it('allows ordinary calls and refuses the listed ones with EPERM', () => {
    for (const [name, nr] of Object.entries(c.allowed)) expect([name, run(program, nr, native)]).toEqual([name, ALLOW]);
    for (const [name, nr] of Object.entries(c.refused)) expect([name, run(program, nr, native)]).toEqual([name, EPERM]);
    expect(refusedSyscalls(arch)).toEqual(expect.arrayContaining(Object.keys(c.refused)));
  });

  it('checks arguments: namespaces in clone and unshare, personality, and clone3 answers ENOSYS', () => {
    const CLONE_THREAD_FLAGS = 0x003d0f00; // what pthread_create passes
    expect(run(program, c.clone, native, CLONE_THREAD_FLAGS)).toBe(ALLOW);
    expect(run(program, c.clone, native, 0x11 /* SIGCHLD: fork */)).toBe(ALLOW);
    expect(run(program, c.clone, native, 0x10000000 | 0x11 /* CLONE_NEWUSER */)).toBe(EPERM);
    expect(run(program, c.clone, native, 0x40000000 /* CLONE_NEWNET */)).toBe(EPERM);
    expect(run(program, c.unshare, native, 0x200 /* CLONE_FILES */)).toBe(ALLOW);
    expect(run(program, c.unshare, native, 0x20000 /* CLONE_NEWNS */)).toBe(EPERM);
    expect(run(program, c.unshare, native, 0x80 /* CLONE_NEWTIME */)).toBe(EPERM);
    expect(run(program, c.clone3, native)).toBe(ENOSYS);
    for (const ok of [0, 8, 0x20000, 0x20008, 0xffffffff]) expect(run(program, c.personality, native, ok)).toBe(ALLOW);
    expect(run(program, c.personality, native, 0x0040000 /* ADDR_NO_RANDOMIZE */)).toBe(EPERM);
  });

  it('kills a call of another architecture, whatever its number', () => {
    for (const nr of [0, 1, 20, 26, 101]) expect(run(program, nr, c.foreign)).toBe(KILL);
    expect(run(program, 0, arch === 'x64' ? ARCH.arm64 : ARCH.x64)).toBe(KILL);
    if (arch === 'x64') expect(run(program, 0x40000000 | 0 /* x32 read */, native)).toBe(EPERM);
  });
});
