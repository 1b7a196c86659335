// A sandboxed command gets none of the descriptors Hangar itself inherited. A supervisor, a CI
// runner or a shell can start Hangar with descriptors open beyond 0-2 and not marked close-on-exec
// (a log file, a socket, a pipe to the supervisor); every child Hangar starts would inherit them,
// and bubblewrap passes such descriptors on into the sandbox by design. Here the worker that runs
// the command is `hangar serve` started with a root-only file open on its descriptor 40 (Node marks
// the low descriptors it finds at start close-on-exec, not the others).
import { closeSync, openSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnHangar, type RunningHangar } from '../support/cli.js';
import { createAgent, createThread, lastAiText, lastValues, run } from '../runtime/support.js';
import { startTestServer, type TestServer } from '../support/server.js';

const FD = 40;
const SECRET = `host-secret-${Math.random().toString(36).slice(2)}`;
let api: TestServer;
let worker: RunningHangar | undefined;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-sandbox-fds-'));
  const secretFile = path.join(dir, 'supervisor-secret.txt');
  writeFileSync(secretFile, `${SECRET}\n`, { mode: 0o600 });
  // The API server runs no command: the worker below, the only one, runs them all.
  api = await startTestServer({ env: { HANGAR_ROLE: 'api' } });
  const fd = openSync(secretFile, 'r');
  try {
    worker = spawnHangar(
      ['serve', '--port', '0', '--database-url', api.databaseUrl, '--data-dir', api.dataDir],
      { HANGAR_ROLE: 'worker', HANGAR_BOOTSTRAP_API_KEY: api.adminKey, HANGAR_SANDBOX_DIR: path.join(dir, 'sandboxes'), LOG_LEVEL: 'info' },
      [...Array.from({ length: FD - 3 }, () => 'ignore' as const), fd],
    );
  } finally {
    closeSync(fd);
  }
  await worker.waitFor(/Hangar is listening on/);
});
afterAll(async () => {
  worker?.child.kill('SIGTERM');
  await worker?.exited;
  await api?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a sandboxed command and the descriptors Hangar inherited', () => {
  it('cannot read a file Hangar’s own parent left open', async () => {
    // Control: the worker process really holds the file on that descriptor, to be inherited.
    expect(readlinkSync(`/proc/${worker!.child.pid}/fd/${FD}`)).toBe(path.join(dir, 'supervisor-secret.txt'));
    expect(Number.parseInt(/^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/${worker!.child.pid}/fdinfo/${FD}`, 'utf8'))![1]!, 8) & 0o2000000).toBe(0);

    const agentId = await createAgent(api, { backend: { type: 'sandbox' } });
    const threadId = await createThread(api, agentId);
    // (bash: dash takes one-digit descriptors only.)
    const command = `bash -c 'cat <&${FD}'; ls -l /proc/self/fd/; echo end`;
    const { events } = await run(api, threadId, { agent_id: agentId, messages: [{ role: 'user', content: `/call execute ${JSON.stringify({ command })}` }], stream_mode: ['values'] });
    const answer = lastAiText(lastValues(events));
    expect(answer).toContain('end');
    expect(answer).not.toContain(SECRET);
    expect(answer).not.toContain('supervisor-secret');
  }, 60_000);
});
