// Settings of the local sandbox driver, on real bubblewrap:
// - A sandbox's disk use (`disk_bytes`) is measured with `du` after a command: a work directory of
//   many files (or a slow file system) must not keep it running unbounded after every command.
//   Beyond HANGAR_SANDBOX_DU_TIMEOUT_MS it is stopped, and the size reads as unknown (null), with a
//   log line. A real `du`; the limit is set far below what it needs for 5,000 files.
// - HANGAR_SANDBOX_SECCOMP=false runs commands without the seccomp filter (on by default: see
//   security.test.ts).
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, run } from '../runtime/support.js';

let server: TestServer;

beforeAll(async () => {
  const sandboxDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-sandboxes-'));
  server = await startTestServer({ env: { HANGAR_SANDBOX_DIR: sandboxDir, HANGAR_SANDBOX_DU_TIMEOUT_MS: '1', HANGAR_SANDBOX_SECCOMP: 'false' } });
});
afterAll(async () => {
  await server?.close();
});

describe('the local sandbox driver’s settings', () => {
  it('du beyond HANGAR_SANDBOX_DU_TIMEOUT_MS is stopped: disk_bytes reads null and the log says why; HANGAR_SANDBOX_SECCOMP=false runs commands without the filter', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox' } });
    const threadId = await createThread(server, agentId);
    const command = 'mkdir many && cd many && seq 1 5000 | xargs touch && ls | wc -l && grep ^Seccomp: /proc/self/status';
    const { events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: `/call execute ${JSON.stringify({ command })}` }], stream_mode: ['values'] });
    // The command's result is the model's as usual (here without the seccomp filter, turned off).
    expect(lastAiText(lastValues(events))).toBe('Done.\nexecute: 5000\nSeccomp:\t0\n\n[Command succeeded with exit code 0]');
    const sandbox = (await server.client.GET('/v1/deepagents/threads/{thread_id}/sandbox', { params: { path: { thread_id: threadId } } })).data!;
    expect(sandbox.commands).toBe(1);
    expect(sandbox.disk_bytes).toBeNull();
    expect(server.logs()).toContain('ran beyond HANGAR_SANDBOX_DU_TIMEOUT_MS and was stopped');
    expect(server.logs()).toContain(sandbox.sandbox_id!);
  });
});
