// Sandboxes on the kubernetes driver with two worker processes on one database (the stand-in
// Kubernetes API of test/deployments/k8s-api-standin.ts; no cluster runs here), and an API-only
// server that never runs a command: a command that runs longer than its sandbox's idle TTL in one
// process keeps its pod, though the other process's sweeper sees the sandbox unused for longer than
// the TTL; a deleted agent's sandbox keeps its pod until the command running in it has ended; and a
// reset from another process stops the command before its objects are deleted.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { startHangar, type Hangar } from '../../src/server.js';
import { startK8sApiStandIn, type K8sApiStandIn } from '../deployments/k8s-api-standin.js';
import { collect, type RunStream } from '../../src/client/stream.js';
import { createAgent, createThread, lastAiText, lastValues, run, start } from '../runtime/support.js';
import { startTestServer, type TestServer } from '../support/server.js';

const NS = 'sandboxes';

let server: TestServer;
let replica: Hangar;
let api: TestServer;
let k8s: K8sApiStandIn;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-k8s-replicas-'));
  k8s = await startK8sApiStandIn();
  const env = {
    HANGAR_SANDBOX_DRIVER: 'kubernetes',
    HANGAR_KUBECONFIG: await k8s.writeKubeconfig(dir),
    HANGAR_SANDBOX_K8S_NAMESPACE: NS,
    HANGAR_SANDBOX_TIMEOUT_SECONDS: '10',
    HANGAR_SANDBOX_SWEEP_MS: '200',
  };
  server = await startTestServer({ env });
  replica = await startHangar(
    loadConfig({ flags: { port: 0, databaseUrl: server.databaseUrl, dataDir: server.dataDir }, env: { HANGAR_BOOTSTRAP_API_KEY: server.adminKey, LOG_LEVEL: 'silent', ...env } }),
    { logDestination: new Writable({ write: (_c, _e, done) => done() }), announce: () => {} },
  );
  api = await startTestServer({ databaseUrl: server.databaseUrl, dataDir: server.dataDir, adminKey: server.adminKey, env: { ...env, HANGAR_ROLE: 'api' } });
});
afterAll(async () => {
  await api?.close();
  await replica?.close();
  await server?.close();
  await k8s?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('sandboxes across worker processes', () => {
  it('another process does not stop a sandbox whose command runs longer than its idle TTL', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox', sandbox_config: { idle_ttl_seconds: 2, delete_after_stop_seconds: 3600 } } });
    const threadId = await createThread(server, agentId);
    const { events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: `/call execute ${JSON.stringify({ command: 'sleep 4; echo finished' })}` }], stream_mode: ['values'] });
    expect(lastAiText(lastValues(events))).toBe('Done.\nexecute: finished\n\n[Command succeeded with exit code 0]');
    const sandbox = (await server.client.GET('/v1/deepagents/threads/{thread_id}/sandbox', { params: { path: { thread_id: threadId } } })).data!;
    const pod = `/hangar-sandbox-${sandbox.sandbox_id}`;
    expect(k8s.requests.filter((r) => r.method === 'DELETE' && r.path.endsWith(pod))).toEqual([]);
  }, 60_000);

  it('a deleted agent’s sandbox keeps its pod while a command runs in it, and its objects go once it has ended', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox', sandbox_config: { scope: 'agent' } } });
    const threadId = await createThread(server, agentId);
    const stream = await startCommand(agentId, threadId, 'echo started; sleep 2; echo finished > done.txt && cat done.txt');
    const id = (await sandboxOf(threadId)).sandbox_id!;
    expect((await api.client.DELETE('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId } } })).response.status).toBe(204);

    expect(lastAiText(lastValues(await collect(stream)))).toBe('Done.\nexecute: started\nfinished\n\n[Command succeeded with exit code 0]');
    // Then the sweep removes all three objects: nothing is left in the namespace.
    for (const resource of ['pods', 'persistentvolumeclaims', 'networkpolicies']) {
      await until(`the ${resource} of the deleted agent’s sandbox to be deleted`, () => deleted(resource, id));
    }
  }, 60_000);

  it('a reset from another process stops the command running in the sandbox, then deletes its objects', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox', sandbox_config: { scope: 'thread' } } });
    const threadId = await createThread(server, agentId);
    const stream = await startCommand(agentId, threadId, 'echo started; sleep 8; echo late');
    const id = (await sandboxOf(threadId)).sandbox_id!;
    // The API server runs no command: the command is in one of the workers.
    expect((await api.client.DELETE('/v1/deepagents/threads/{thread_id}/sandbox', { params: { path: { thread_id: threadId } } })).response.status).toBe(204);

    const answer = lastAiText(lastValues(await collect(stream)));
    expect(answer).toContain('[Command stopped: its sandbox was removed while it ran');
    expect(answer).not.toContain('late');
    for (const resource of ['pods', 'persistentvolumeclaims', 'networkpolicies']) {
      await until(`the ${resource} of the reset sandbox to be deleted`, () => deleted(resource, id));
    }
    expect((await sandboxOf(threadId)).status).toBe('none');
  }, 60_000);
});

const call = (command: string) => `/call execute ${JSON.stringify({ command })}`;
const sandboxOf = async (threadId: string) => (await server.client.GET('/v1/deepagents/threads/{thread_id}/sandbox', { params: { path: { thread_id: threadId } } })).data!;
const deleted = (resource: string, id: string) => k8s.requests.some((r) => r.method === 'DELETE' && r.path === `/${resource === 'networkpolicies' ? 'apis/networking.k8s.io/v1' : 'api/v1'}/namespaces/${NS}/${resource}/hangar-sandbox-${id}`);

async function until<T>(what: string, probe: () => T | undefined | false): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const v = probe();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** Start `command` in the thread and wait until it has printed its first line (it runs). */
async function startCommand(agentId: string, threadId: string, command: string): Promise<RunStream> {
  const stream = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: call(command) }], stream_mode: ['custom', 'values'] });
  expect(stream.status).toBe(200);
  for (;;) {
    const next = await stream.events.next();
    if (next.done) throw new Error('the run ended before its command started');
    if (next.value.event === 'custom') return stream;
  }
}
