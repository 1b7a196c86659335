// Sandboxes on the local driver (real bubblewrap) with several processes on one database, as a
// deployment with replicas runs them: an API-only server (it never runs a command, so whatever it
// does to a sandbox is done from another process than the command's) and two workers, all sharing
// one sandbox directory (the shared storage docs/sandboxes.md asks for). Each command holds a lease
// in the database, which every process's sweeper and removal respect.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, type RunStream } from '../../src/client/stream.js';
import type { Hangar } from '../../src/server.js';
import { createAgent, createThread, lastAiText, lastValues, run, start, startWorker } from '../runtime/support.js';
import { startTestServer, type TestServer } from '../support/server.js';

const UID_BASE = 330_000;
let api: TestServer;
let workers: Hangar[] = [];
let sandboxDir: string;

beforeAll(async () => {
  sandboxDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-sandbox-replicas-'));
  const env = {
    HANGAR_SANDBOX_DIR: sandboxDir,
    HANGAR_SANDBOX_UID_BASE: String(UID_BASE),
    HANGAR_SANDBOX_SWEEP_MS: '200',
    HANGAR_SANDBOX_TIMEOUT_SECONDS: '30',
  };
  api = await startTestServer({ env: { ...env, HANGAR_ROLE: 'api' } });
  workers = [await startWorker(api, env), await startWorker(api, env)];
});
afterAll(async () => {
  for (const w of workers) await w.close();
  await api?.close();
  if (sandboxDir) await rm(sandboxDir, { recursive: true, force: true });
});

const call = (command: string) => `/call execute ${JSON.stringify({ command })}`;
const sandboxOf = async (threadId: string) => (await api.client.GET('/v1/deepagents/threads/{thread_id}/sandbox', { params: { path: { thread_id: threadId } } })).data!;

async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const v = await probe();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** Start `command` in the thread and wait until it has printed its first line (it runs). */
async function startCommand(agentId: string, threadId: string, command: string): Promise<RunStream> {
  const stream = await start(api, threadId, { agent_id: agentId, messages: [{ role: 'user', content: call(command) }], stream_mode: ['custom', 'values'] });
  expect(stream.status).toBe(200);
  for (;;) {
    const next = await stream.events.next();
    if (next.done) throw new Error('the run ended before its command started');
    if (next.value.event === 'custom') return stream;
  }
}

/** Processes on the host running as a sandbox user of these servers. */
function sandboxProcesses(): number {
  const uids = execFileSync('ps', ['-e', '-o', 'uid='], { encoding: 'utf8' }).split('\n').map((l) => Number(l.trim()));
  return uids.filter((u) => u >= UID_BASE && u < UID_BASE + 60_000).length;
}

describe('a sandbox shared by processes on one database', () => {
  it('deleting an agent while a command runs in its sandbox: the command ends normally, then the sandbox goes', async () => {
    const agentId = await createAgent(api, { backend: { type: 'sandbox', sandbox_config: { scope: 'agent' } } });
    const threadId = await createThread(api, agentId);
    // Whichever worker runs it, the other one's sweeper (every 200 ms) sees a deleted agent's sandbox.
    const stream = await startCommand(agentId, threadId, 'echo started; sleep 2; echo finished > done.txt && cat done.txt');
    const id = (await sandboxOf(threadId)).sandbox_id!;
    expect((await api.client.DELETE('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId } } })).response.status).toBe(204);

    const answer = lastAiText(lastValues(await collect(stream)));
    expect(answer).toBe('Done.\nexecute: started\nfinished\n\n[Command succeeded with exit code 0]');
    // Then, no command holding it, the sweep removes it: no orphan is left.
    await until('the deleted agent’s sandbox files to be removed', () => !existsSync(path.join(sandboxDir, id)));
    expect((await sandboxOf(threadId)).status).toBe('none');
  }, 60_000);

  it('resetting a sandbox from another process stops the command running in it; its files go once it has stopped', async () => {
    const agentId = await createAgent(api, { backend: { type: 'sandbox', sandbox_config: { scope: 'thread' } } });
    const threadId = await createThread(api, agentId);
    const stream = await startCommand(agentId, threadId, 'echo started; sleep 25; echo late > late.txt');
    const id = (await sandboxOf(threadId)).sandbox_id!;
    expect(existsSync(path.join(sandboxDir, id))).toBe(true);

    // The API server runs no command: the command is in a worker process.
    const reset = await api.client.DELETE('/v1/deepagents/threads/{thread_id}/sandbox', { params: { path: { thread_id: threadId } } });
    expect(reset.response.status).toBe(204);
    const answer = lastAiText(lastValues(await collect(stream)));
    expect(answer).toContain('started');
    expect(answer).toContain('[Command stopped: its sandbox was removed while it ran');
    expect(answer).not.toContain('ran longer than');

    await until('the reset sandbox’s files to be removed', () => !existsSync(path.join(sandboxDir, id)));
    expect(sandboxProcesses()).toBe(0);
    expect((await sandboxOf(threadId)).status).toBe('none');
    // The next command starts in a fresh, empty sandbox.
    const { events } = await run(api, threadId, { agent_id: agentId, messages: [{ role: 'user', content: call('ls -A | wc -l') }], stream_mode: ['values'] });
    expect(lastAiText(lastValues(events))).toBe('Done.\nexecute: 0\n\n[Command succeeded with exit code 0]');
    expect((await sandboxOf(threadId)).sandbox_id).not.toBe(id);
  }, 60_000);
});
