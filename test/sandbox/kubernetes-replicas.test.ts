// Sandboxes on the kubernetes driver with two worker processes on one database (the stand-in
// Kubernetes API of test/deployments/k8s-api-standin.ts): a command that runs longer than its
// sandbox's idle TTL in one process keeps its pod, though the other process's sweeper sees the
// sandbox unused for longer than the TTL.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { startHangar, type Hangar } from '../../src/server.js';
import { startK8sApiStandIn, type K8sApiStandIn } from '../deployments/k8s-api-standin.js';
import { createAgent, createThread, lastAiText, lastValues, run } from '../runtime/support.js';
import { startTestServer, type TestServer } from '../support/server.js';

const NS = 'sandboxes';

let server: TestServer;
let replica: Hangar;
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
});
afterAll(async () => {
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
});
