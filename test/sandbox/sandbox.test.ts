// Agents with a sandbox backend, end to end on the real local driver (bubblewrap): the agent writes a
// script, runs it, fixes it and runs it again in one conversation; its files persist from run to run,
// each thread has its own sandbox (an agent-scoped one is shared), every command is traced, approval
// can cover `execute`, and sandboxes go idle, are removed, and are cleaned up when orphaned.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { collect } from '../../src/client/stream.js';
import { createAgent, createThread, lastAiText, lastValues, run, start } from '../runtime/support.js';

let server: TestServer;
let sandboxDir: string;
const ORPHAN = '0f0f0f0f-0000-4000-8000-00000000beef';

beforeAll(async () => {
  sandboxDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-sandboxes-'));
  // A sandbox left behind by a crash (no row in the database): removed when Hangar starts.
  await mkdir(path.join(sandboxDir, ORPHAN));
  await writeFile(path.join(sandboxDir, ORPHAN, 'left-over.txt'), 'x');
  server = await startTestServer({ env: { HANGAR_SANDBOX_DIR: sandboxDir, HANGAR_SANDBOX_SWEEP_MS: '200' } });
});
afterAll(async () => {
  await server?.close();
});

const sandboxOf = async (threadId: string) => (await server.client.GET('/v1/deepagents/threads/{thread_id}/sandbox', { params: { path: { thread_id: threadId } } })).data!;

/** Send one message to the thread and return the agent's answer. */
async function say(agentId: string, threadId: string, text: string): Promise<string> {
  const { events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: text }], stream_mode: ['values'] });
  expect(events.find((e) => e.event === 'error')).toBeUndefined();
  return lastAiText(lastValues(events));
}

const call = (tool: string, args: Record<string, unknown>) => `/call ${tool} ${JSON.stringify(args)}`;

async function until<T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const v = await probe();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('an agent in a sandbox', () => {
  it('writes a script, runs it, fixes it and runs it again; the commands are traced; its files persist', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox', sandbox_config: { scope: 'thread' } } });
    const threadId = await createThread(server, agentId);
    expect((await sandboxOf(threadId)).status).toBe('none');

    expect(await say(agentId, threadId, call('write_file', { file_path: '/workspace/sum.py', content: 'print(sum([1, 2, 3])\n' }))).toContain('Successfully wrote');
    const broken = await say(agentId, threadId, call('execute', { command: 'python3 sum.py' }));
    expect(broken).toContain('SyntaxError');
    expect(broken).toContain('[Command failed with exit code 1]');
    expect(await say(agentId, threadId, call('edit_file', { file_path: '/workspace/sum.py', old_string: '3])', new_string: '3]))' }))).toContain('Successfully replaced');

    const { stream, events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: call('execute', { command: 'python3 sum.py && ls' }) }] });
    expect(lastAiText(lastValues(events))).toBe('Done.\nexecute: 6\nsum.py\n\n[Command succeeded with exit code 0]');

    // The command, its exit code, duration and output are in the run's trace, under the tool's run.
    const trace = (await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: stream.runId! } } })).data as unknown as Tree;
    const tool = flatten(trace).find((r) => r.run_type === 'tool' && r.name === 'execute')!;
    const command = tool.child_runs.find((r) => r.name === 'sandbox_execute')!;
    expect(command.inputs).toEqual({ command: 'python3 sum.py && ls' });
    expect(command.outputs).toMatchObject({ exit_code: 0, output: '6\nsum.py\n', truncated: false, stopped_by: null });
    expect((command.outputs as { duration_ms: number }).duration_ms).toBeGreaterThan(0);

    // The file tools see the sandbox too, and a later run finds the files where they were left.
    expect(await say(agentId, threadId, call('ls', { path: '/workspace' }))).toContain('/workspace/sum.py');
    expect(await say(agentId, threadId, call('read_file', { file_path: '/workspace/sum.py' }))).toContain('print(sum([1, 2, 3]))');
    expect(await say(agentId, threadId, call('grep', { pattern: 'sum(', path: '/workspace' }))).toContain('/workspace/sum.py');

    const status = await sandboxOf(threadId);
    expect(status).toMatchObject({ status: 'running', scope: 'thread', driver: 'local', idle_ttl_seconds: 1800, delete_after_stop_seconds: 604800 });
    expect(status.commands).toBeGreaterThanOrEqual(6);
    expect(status.disk_bytes).toBeGreaterThan(0);
    expect(Date.parse(status.last_used_at!)).toBeGreaterThanOrEqual(Date.parse(status.created_at!));
    expect(existsSync(path.join(sandboxDir, status.sandbox_id!, 'sum.py'))).toBe(true);

    // /agent/ keeps its route: the definition, read-only.
    expect(await say(agentId, threadId, call('read_file', { file_path: '/agent/AGENTS.md' }))).toContain('You are a test agent.');
    expect(await say(agentId, threadId, call('write_file', { file_path: '/agent/AGENTS.md', content: 'x' }))).not.toContain('Successfully');

    // DELETE resets it: files gone, the next command starts afresh.
    const reset = await server.client.DELETE('/v1/deepagents/threads/{thread_id}/sandbox', { params: { path: { thread_id: threadId } } });
    expect(reset.response.status).toBe(204);
    expect((await sandboxOf(threadId)).status).toBe('none');
    expect(existsSync(path.join(sandboxDir, status.sandbox_id!))).toBe(false);
    expect(await say(agentId, threadId, call('execute', { command: 'ls -A | wc -l' }))).toContain('execute: 0\n');
  });

  it('gives each thread its own sandbox; an agent-scoped sandbox is shared by the agent’s threads', async () => {
    const perThread = await createAgent(server, { backend: { type: 'thread_scoped_sandbox' } });
    const [a, b] = [await createThread(server, perThread), await createThread(server, perThread)];
    await say(perThread, a, call('execute', { command: 'echo secret-of-a > mine.txt' }));
    expect(await say(perThread, b, call('execute', { command: 'ls -A; cat mine.txt' }))).toContain('No such file');
    expect((await sandboxOf(a)).sandbox_id).not.toBe((await sandboxOf(b)).sandbox_id);

    const shared = await createAgent(server, { backend: { type: 'sandbox', sandbox_config: { scope: 'agent' } } });
    const [c, d] = [await createThread(server, shared), await createThread(server, shared)];
    await say(shared, c, call('execute', { command: 'echo from-c > shared.txt' }));
    expect(await say(shared, d, call('execute', { command: 'cat shared.txt' }))).toContain('from-c');
    expect((await sandboxOf(c)).sandbox_id).toBe((await sandboxOf(d)).sandbox_id);
    expect((await sandboxOf(d)).scope).toBe('agent');
  });

  it('asks for approval before execute when interrupt_config names it', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox' }, tools: { tools: [], interrupt_config: { execute: true } } });
    const threadId = await createThread(server, agentId);
    const { events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: call('execute', { command: 'echo approved > proof.txt' }) }], stream_mode: ['values'] });
    const pending = (lastValues(events).__interrupt__ as { value: { action_requests: { name: string; args: unknown }[] } }[])[0]!.value;
    expect(pending.action_requests).toEqual([expect.objectContaining({ name: 'execute', args: { command: 'echo approved > proof.txt' } })]);
    expect((await sandboxOf(threadId)).status).toBe('none'); // nothing ran

    const resumed = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'placeholder' }], command: { resume: { decisions: [{ type: 'approve' }] } } } as never);
    expect(lastAiText(lastValues(resumed.events))).toContain('[Command succeeded with exit code 0]');
    expect(await say(agentId, threadId, 'plain message')).toBe('You said: plain message');
  });

  it('streams a command’s output as it comes (stream mode custom)', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox' } });
    const threadId = await createThread(server, agentId);
    const command = 'echo first; sleep 0.5; echo second';
    const { events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: call('execute', { command }) }], stream_mode: ['custom', 'updates'] });
    const custom = events.filter((e) => e.event === 'custom').map((e) => e.data as { sandbox_output: { command: string; text: string } });
    expect(custom.length).toBeGreaterThanOrEqual(2); // one piece per write, not one at the end
    expect(custom.every((c) => c.sandbox_output.command === command)).toBe(true);
    expect(custom.map((c) => c.sandbox_output.text).join('')).toBe('first\nsecond\n');
    // The custom events come before the tool's result.
    const firstCustom = events.findIndex((e) => e.event === 'custom');
    const toolUpdate = events.findIndex((e) => e.event === 'updates' && JSON.stringify(e.data).includes('exit code 0'));
    expect(firstCustom).toBeLessThan(toolUpdate);
  });

  it('streams output written a byte at a time as a few events, not one per write (each is a row of the run’s log)', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox' } });
    const threadId = await createThread(server, agentId);
    // 300 writes of one byte, each after a pause (a process of its own): 300 reads on Hangar's side.
    const command = 'i=0; while [ $i -lt 300 ]; do printf x; sleep 0.01; i=$((i+1)); done';
    const { events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: call('execute', { command }) }], stream_mode: ['custom', 'values'] });
    const custom = events.filter((e) => e.event === 'custom').map((e) => e.data as { sandbox_output: { text: string } });
    expect(custom.map((c) => c.sandbox_output.text).join('')).toBe('x'.repeat(300));
    expect(custom.length).toBeGreaterThanOrEqual(2);
    expect(custom.length).toBeLessThan(100);
    expect(lastAiText(lastValues(events))).toContain('[Command succeeded with exit code 0]');
  });

  it('cancelling a run kills the command it is running, with everything the command started', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox' } });
    const threadId = await createThread(server, agentId);
    // A marker no other process on the host has, to find the command's processes by.
    const marker = `${40 + Math.floor(Math.random() * 50)}.${Date.now() % 1000}`;
    const command = `echo started; sleep ${marker} & sleep ${marker}; echo late > late.txt`;
    const stream = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: call('execute', { command }) }], stream_mode: ['custom'] });
    expect(stream.status).toBe(200);
    for (;;) {
      const next = await stream.events.next();
      if (next.done) throw new Error('the run ended before its command started');
      if (next.value.event === 'custom') break; // "started": the command runs
    }
    const running = () => execFileSync('ps', ['-e', '-o', 'args='], { encoding: 'utf8' }).split('\n').filter((l) => l === `sleep ${marker}`).length;
    expect(running()).toBe(2);

    const cancelled = await server.client.POST('/v1/deepagents/threads/{thread_id}/runs/{run_id}/cancel', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
    expect(cancelled.response.status).toBeLessThan(300);
    await collect(stream);
    // Both sleeps (the command's own and the one it left in the background) are gone long before
    // their end, and the command never got to write its file.
    await until('the cancelled command’s processes to end', async () => running() === 0);
    expect(await say(agentId, threadId, call('execute', { command: 'ls -A' }))).not.toContain('late.txt');
  });

  it('does ordinary work under the seccomp filter (on by default): git, node, python with threads and processes, shell pipelines', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox' } });
    const threadId = await createThread(server, agentId);
    const command = [
      'grep ^Seccomp: /proc/self/status',
      'git init -q repo && cd repo && git config user.email a@b && git config user.name A',
      'echo hello > f && git add f && git commit -qm first && echo "commits $(git log --oneline | wc -l)"',
      'cd ..',
      `node -e 'require("fs").readFile("/etc/hostname", () => require("child_process").exec("echo node-child", (e, o) => console.log("node", o.trim())))'`,
      `python3 -c 'import threading, subprocess; t = threading.Thread(target=print, args=("py-thread",)); t.start(); t.join(); print(subprocess.run(["echo", "py-child"], capture_output=True, text=True).stdout.strip())'`,
      'seq 1 100 | sort -rn | head -1 | tr 0 o',
    ].join(' && ');
    const answer = await say(agentId, threadId, call('execute', { command }));
    expect(answer).toBe('Done.\nexecute: Seccomp:\t2\ncommits 1\nnode node-child\npy-thread\npy-child\n1oo\n\n[Command succeeded with exit code 0]');
  });

  it('an agent on the state backend has no execute tool', async () => {
    const agentId = await createAgent(server);
    const threadId = await createThread(server, agentId);
    const { events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'hi' }], stream_mode: ['values'] });
    const tools = (lastValues(events).tools as { name: string }[]).map((t) => t.name);
    expect(tools).toContain('write_file');
    expect(tools).not.toContain('execute');
  });
});

describe('sandbox lifecycle', () => {
  it('removed the orphan left by a crash at start', () => {
    expect(existsSync(path.join(sandboxDir, ORPHAN))).toBe(false);
  });

  it('stops an idle sandbox after idle_ttl_seconds and removes it delete_after_stop_seconds later', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox', sandbox_config: { idle_ttl_seconds: 1, delete_after_stop_seconds: 1 } } });
    const threadId = await createThread(server, agentId);
    await say(agentId, threadId, call('execute', { command: 'echo kept > file.txt' }));
    const id = (await sandboxOf(threadId)).sandbox_id!;
    const stopped = await until('the sandbox to stop', async () => {
      const s = await sandboxOf(threadId);
      return s.status === 'stopped' && s;
    });
    expect(stopped.stopped_at).not.toBeNull();
    expect(existsSync(path.join(sandboxDir, id, 'file.txt'))).toBe(true); // stopped keeps the files
    await until('the sandbox to be removed', async () => (await sandboxOf(threadId)).status === 'none');
    // The record goes first, then the driver removes the files (an orphan sweep finishes a removal a crash cut short).
    await until('the sandbox files to be removed', async () => !existsSync(path.join(sandboxDir, id)));
  });

  it('an agent-scoped sandbox goes with its agent, not a week later', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox', sandbox_config: { scope: 'agent' } } });
    const threadId = await createThread(server, agentId);
    await say(agentId, threadId, call('execute', { command: 'echo private > notes.txt' }));
    const id = (await sandboxOf(threadId)).sandbox_id!;
    expect(existsSync(path.join(sandboxDir, id, 'notes.txt'))).toBe(true);
    expect((await server.client.DELETE('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId } } })).response.status).toBe(204);
    await until('the deleted agent’s sandbox files to be removed', async () => !existsSync(path.join(sandboxDir, id)));
    expect((await sandboxOf(threadId)).status).toBe('none');
  });

  it('a thread’s sandbox goes with its thread', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox' } });
    const threadId = await createThread(server, agentId);
    await say(agentId, threadId, call('execute', { command: 'echo x > y' }));
    const id = (await sandboxOf(threadId)).sandbox_id!;
    expect((await server.client.DELETE('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } })).response.status).toBe(204);
    await until('the sandbox files to be removed', async () => !existsSync(path.join(sandboxDir, id)));
  });
});

type Tree = { id: string; name: string; run_type: string; inputs: unknown; outputs: unknown; child_runs: Tree[] };
const flatten = (t: Tree): Tree[] => [t, ...t.child_runs.flatMap(flatten)];
