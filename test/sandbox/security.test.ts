// What a sandboxed command cannot do, on the real local driver (bubblewrap), driven as a user would:
// an agent on the `scripted` model runs the commands. Each check has a control showing that what the
// sandbox cannot reach is really there on the host.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, run } from '../runtime/support.js';

const UID_BASE = 310_000;
let server: TestServer;
let sandboxDir: string;
let agentId: string;

beforeAll(async () => {
  sandboxDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-sandboxes-'));
  server = await startTestServer({
    env: {
      HANGAR_SANDBOX_DIR: sandboxDir,
      HANGAR_SANDBOX_UID_BASE: String(UID_BASE),
      HANGAR_SANDBOX_TIMEOUT_SECONDS: '5',
      HANGAR_SANDBOX_CPU_SECONDS: '2',
      HANGAR_SANDBOX_MEMORY_MB: '256',
      HANGAR_SANDBOX_MAX_PROCESSES: '64',
      HANGAR_SANDBOX_MAX_OUTPUT_BYTES: '20000',
    },
  });
  agentId = await createAgent(server, { backend: { type: 'sandbox', sandbox_config: { scope: 'thread' } } });
});
afterAll(async () => {
  await server?.close();
});

const call = (command: string) => `/call execute ${JSON.stringify({ command })}`;

/** Run `commands` (in parallel, one model step) in the thread; the agent's answer lists each result. */
async function execute(threadId: string, ...commands: string[]): Promise<string> {
  const { events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: commands.map(call).join('\n') }], stream_mode: ['values'] });
  expect(events.find((e) => e.event === 'error')).toBeUndefined();
  return lastAiText(lastValues(events));
}

const sandboxId = async (threadId: string) => (await server.client.GET('/v1/deepagents/threads/{thread_id}/sandbox', { params: { path: { thread_id: threadId } } })).data!.sandbox_id!;

/** Whether a TCP connection to 127.0.0.1:port opens from the host. */
function reachableFromHost(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

/** Processes on the host running as a sandbox user of this server. */
function sandboxProcesses(): number {
  const uids = execFileSync('ps', ['-e', '-o', 'uid='], { encoding: 'utf8' }).split('\n').map((l) => Number(l.trim()));
  return uids.filter((u) => u >= UID_BASE && u < UID_BASE + 60_000).length;
}

describe('a sandboxed command cannot read', () => {
  it('Hangar’s data directory, another sandbox’s files, the host’s home, Hangar’s environment or processes', async () => {
    const other = await createThread(server, agentId);
    await execute(other, 'echo other-thread-secret > secret.txt');
    const otherFile = path.join(sandboxDir, await sandboxId(other), 'secret.txt');
    // Controls: all of these exist on the host.
    expect(readFileSync(otherFile, 'utf8')).toBe('other-thread-secret\n');
    const secretKey = path.join(server.dataDir, 'secret.key');
    expect(existsSync(secretKey)).toBe(true);
    expect(existsSync(os.homedir())).toBe(true);
    expect(existsSync(`/proc/${process.pid}/environ`)).toBe(true);

    const threadId = await createThread(server, agentId);
    const answer = await execute(
      threadId,
      [
        `cat ${otherFile}`,
        `ls ${sandboxDir}`,
        `ls ${server.dataDir}`,
        `cat ${secretKey}`,
        `ls ${os.homedir()}`,
        `cat /proc/${process.pid}/environ`,
        'env',
        'echo end',
      ].join('; '),
    );
    expect(answer).toContain(`cat: ${otherFile}: No such file or directory`);
    expect(answer).toContain(`ls: cannot access '${sandboxDir}': No such file or directory`);
    expect(answer).toContain(`ls: cannot access '${server.dataDir}': No such file or directory`);
    expect(answer).toContain(`cat: ${secretKey}: No such file or directory`);
    expect(answer).toContain(`ls: cannot access '${os.homedir()}': No such file or directory`);
    expect(answer).toContain(`cat: /proc/${process.pid}/environ: No such file or directory`);
    expect(answer).toContain('end');
    expect(answer).not.toContain('other-thread-secret');
    expect(answer).not.toContain(server.adminKey);
    expect(answer).not.toContain(server.databaseUrl);
    expect(answer).not.toMatch(/HANGAR_|DATABASE_URL/);
  });

  it('where Hangar keeps its data, from the command lines of the processes it can see', async () => {
    const threadId = await createThread(server, agentId);
    const answer = await execute(threadId, 'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < $f; echo; done; echo end');
    // Its PID 1 (bubblewrap's) is there, and its own shell…
    expect(answer).toMatch(/\bbwrap /);
    expect(answer).toContain('end');
    // …but not the host directory bound at /workspace, nor anything else of Hangar's data directory.
    expect(answer).not.toContain(sandboxDir);
    expect(answer).not.toContain(server.dataDir);
  });

  it('writes nothing outside its work directory and /tmp (the system is read-only)', async () => {
    const threadId = await createThread(server, agentId);
    const answer = await execute(threadId, 'touch /usr/bin/planted; touch /etc/planted; echo ok > /tmp/t && cat /tmp/t');
    expect(answer).toContain("touch: cannot touch '/usr/bin/planted': Read-only file system");
    expect(answer).toMatch(/touch: cannot touch '\/etc\/planted': (Read-only file system|Permission denied)/);
    expect(answer).toContain('ok');
    expect(existsSync('/usr/bin/planted')).toBe(false);
  });
});

describe('a sandboxed command cannot gain privileges', () => {
  it('by creating a user namespace of its own (which would give it every capability inside)', async () => {
    // Control: this host lets an unprivileged user create user namespaces, so only the sandbox can stop it.
    expect(execFileSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--', 'unshare', '-Ur', 'id', '-u'], { encoding: 'utf8' }).trim()).toBe('0');
    const threadId = await createThread(server, agentId);
    const answer = await execute(
      threadId,
      'unshare -U true; echo "unshare-U exit $?"; unshare -Ur id; echo "unshare-Ur exit $?"; echo end',
    );
    expect(answer).toContain('end');
    expect(answer).toMatch(/unshare-U exit [1-9]/);
    expect(answer).toMatch(/unshare-Ur exit [1-9]/);
    expect(answer).not.toMatch(/uid=0\b/);
  });
});

describe('a sandboxed command is refused the system calls it has no use for (seccomp)', () => {
  // Calls an unprivileged process may make on this host, each by number (perl's `syscall`), as a
  // command written to get at the kernel would.
  const x64 = os.arch() === 'x64';
  const calls = {
    ptrace: `syscall(${x64 ? 101 : 117}, 0, 0, 0, 0)`, // PTRACE_TRACEME
    keyctl: `syscall(${x64 ? 250 : 219}, 0, -3, 0)`, // KEYCTL_GET_KEYRING_ID of the session keyring
    io_uring_setup: 'syscall(425, 1, $params)', // one entry; its parameters are written back
    personality: `syscall(${x64 ? 135 : 92}, 0x0040000)`, // ADDR_NO_RANDOMIZE
  };
  const script = '$params = "\\0" x 120; ' + Object.entries(calls)
    .map(([name, call]) => `$r = ${call}; print "${name} ", ($r == -1 ? "refused: $!" : "allowed"), "\\n";`)
    .join(' ');
  const perl = (pre = '') => `${pre}perl -e '${script}'`;

  it('each fails with EPERM, and the command goes on', async () => {
    // Control: as an unprivileged user on the host, each of these calls is allowed.
    const host = execFileSync('sh', ['-c', perl('setpriv --reuid=65534 --regid=65534 --clear-groups -- ')], { encoding: 'utf8' });
    for (const name of Object.keys(calls)) expect(host).toContain(`${name} allowed`);

    const threadId = await createThread(server, agentId);
    const answer = await execute(threadId, `${perl()}; grep ^Seccomp: /proc/self/status; unshare -m true; setarch $(uname -m) -R true; echo end`);
    for (const name of Object.keys(calls)) expect(answer).toContain(`${name} refused: Operation not permitted`);
    expect(answer).toContain('Seccomp:\t2');
    expect(answer).toMatch(/unshare: unshare failed: Operation not permitted/);
    expect(answer).toMatch(/setarch: failed to set personality to \S+: Operation not permitted/);
    expect(answer).toContain('end');
  });

  it.runIf(os.arch() === 'x64')('a 32-bit system call (int 0x80 from a 64-bit process) kills the process', async () => {
    // i386 numbers differ from x86_64's: a filter checking only native numbers would let this through.
    const i386 = [
      'import ctypes, mmap',
      'm = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)',
      'm.write(bytes([0xb8, 0x14, 0, 0, 0, 0xcd, 0x80, 0xc3]))  # mov eax, 20 (i386 getpid); int 0x80; ret',
      'print("i386 getpid", ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))(), flush=True)',
    ].join('\n');
    // Control: on the host the call returns a process id.
    expect(execFileSync('/usr/bin/python3', ['-c', i386], { encoding: 'utf8' })).toMatch(/^i386 getpid \d+$/m);
    const threadId = await createThread(server, agentId);
    const answer = await execute(threadId, `cat > i386.py <<'EOF'\n${i386}\nEOF\npython3 i386.py; echo "exit $?"`);
    expect(answer).not.toContain('i386 getpid');
    expect(answer).toContain('exit 159'); // 128 + SIGSYS
  });
});

describe('a sandboxed command cannot reach', () => {
  it('Hangar or PostgreSQL on 127.0.0.1, nor any other address', async () => {
    const pgPort = Number(new URL(server.databaseUrl).port || 5432);
    // Controls: both listen on the host's loopback.
    expect(await reachableFromHost(server.hangar.port)).toBe(true);
    expect(await reachableFromHost(pgPort)).toBe(true);

    const threadId = await createThread(server, agentId);
    const probe = (host: string, port: number) => `(bash -c 'echo > /dev/tcp/${host}/${port}' 2>&1 && echo "open ${host}:${port}" || echo "closed ${host}:${port}")`;
    const answer = await execute(threadId, [probe('127.0.0.1', server.hangar.port), probe('127.0.0.1', pgPort), probe('10.0.0.1', 80), probe('192.0.2.1', 443), 'cat /proc/net/dev'].join('; '));
    expect(answer).toContain(`closed 127.0.0.1:${server.hangar.port}`);
    expect(answer).toContain(`closed 127.0.0.1:${pgPort}`);
    expect(answer).toContain('closed 10.0.0.1:80');
    expect(answer).toContain('closed 192.0.2.1:443');
    expect(answer).toContain('Network is unreachable');
    expect(answer).not.toContain('open ');
    // Only a loopback device of its own.
    const devices = answer.split('\n').filter((l) => /^\s*\w+:\s+\d/.test(l)).map((l) => l.trim().split(':')[0]);
    expect(devices).toEqual(['lo']);
  });
});

describe('a runaway command is contained and the run goes on', () => {
  it('a fork bomb, a memory hog, an infinite loop and a flood of output each end as a tool result the model reads; the next command runs', async () => {
    const threadId = await createThread(server, agentId);
    // One command per run, in one thread: the process limit is the sandbox's (its user's), so
    // commands of one sandbox running side by side share it.
    const results: string[] = [];
    for (const command of ['bomb() { bomb | bomb & }; bomb; sleep 30', 'python3 -c "x = bytearray(1 << 30)"', 'while :; do :; done', 'yes flood', 'echo still-here']) {
      const answer = await execute(threadId, command);
      expect(answer.startsWith('Done.\nexecute: ')).toBe(true);
      results.push(answer.slice('Done.\nexecute: '.length));
    }
    const [bomb, hog, loop, flood, after] = results as [string, string, string, string, string];
    // The process limit stops the bomb (`Cannot fork`); then the shell gives up, or its complaints
    // reach the output limit, or the wall clock ends it. Either way everything it started is gone
    // (checked below).
    expect(bomb).toMatch(/Cannot fork|Resource temporarily unavailable/);
    expect(bomb).toMatch(/\[Command stopped: (it ran longer than the sandbox's limit of 5 s|its output went beyond the sandbox's limit of 20000 bytes)\]|\[Command failed with exit code \d+\]/);
    expect(hog).toContain('MemoryError');
    expect(hog).toContain('[Command failed with exit code 1]');
    // The CPU limit (2 s) ends the loop: SIGXCPU at the soft limit (128 + 24), or SIGKILL at the hard
    // one (128 + 9) when the soft signal lands late on a busy host; else the wall clock (5 s) does.
    expect(loop).toMatch(/\[Command failed with exit code (152|137)\]|ran longer than/);
    expect(flood).toContain('[Command stopped: its output went beyond the sandbox');
    expect(flood).toContain('[Output was truncated due to size limits]');
    expect(flood.split('\n').filter((l) => l === 'flood').length).toBeLessThanOrEqual(20000 / 6);
    expect(after).toContain('still-here');
    expect(after).toContain('[Command succeeded with exit code 0]');
    // Nothing of any of them is left running on the host.
    expect(sandboxProcesses()).toBe(0);
    // The thread goes on.
    expect(await execute(threadId, 'echo next-run')).toContain('next-run');
  });

  it('runs at the lowest CPU priority, which it cannot raise, and is the first the OOM killer ends, which it cannot change', async () => {
    const threadId = await createThread(server, agentId);
    const answer = await execute(
      threadId,
      'nice; cat /proc/self/oom_score_adj; renice -n 0 $$ >/dev/null 2>&1 || echo renice-refused; nice; (echo 0 > /proc/self/oom_score_adj) 2>/dev/null || echo oom-refused; choom -p $$ -n 0 >/dev/null 2>&1 || echo choom-refused; cat /proc/self/oom_score_adj',
    );
    expect(answer).toBe('Done.\nexecute: 19\n1000\nrenice-refused\n19\noom-refused\nchoom-refused\n1000\n\n[Command succeeded with exit code 0]');
  });

  it('a file beyond the size limit is cut off', async () => {
    const threadId = await createThread(server, agentId);
    const answer = await execute(threadId, 'head -c 300000000 /dev/zero > big; ls -l big | cut -d" " -f5');
    expect(answer).toContain('File size limit exceeded');
    expect(answer).toContain('268435456'); // the default 256 MiB
  });
});
