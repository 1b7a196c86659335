// Agents in sandboxes on the kubernetes driver (HANGAR_SANDBOX_DRIVER=kubernetes), driven through
// Hangar's HTTP API as a user would, against the STAND-IN Kubernetes API server of the deployment
// tests (test/deployments/k8s-api-standin.ts): no cluster can run on this machine. The stand-in
// answers apply, read, list and delete the way an API server does, turns pods Running, and serves the
// real exec WebSocket protocol (v5.channel.k8s.io / v4.channel.k8s.io) — running each command for
// real with bubblewrap on this machine, in a local temporary directory that stands for the pod's
// volume, as the pod's user, with a read-only root and no network when the pod's NetworkPolicy
// allows no egress. What a real cluster adds (scheduling, image pulls, a CNI enforcing the policy,
// the kubelet) is not exercised; what Hangar sends is asserted on what the stand-in received.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubernetesSandboxDriver } from '../../src/sandbox/kubernetes/index.js';
import { startK8sApiStandIn, type K8sApiStandIn } from '../deployments/k8s-api-standin.js';
import { collect } from '../../src/client/stream.js';
import { createAgent, createThread, lastAiText, lastValues, run, start } from '../runtime/support.js';
import { startTestServer, type TestServer } from '../support/server.js';

const NS = 'sandboxes';
/** The stand-in's certificate is self-signed: the test's own requests to it skip verification. */
const insecure = new Agent({ connect: { rejectUnauthorized: false } });
const ORPHAN = '0f0f0f0f-0000-4000-8000-00000000cafe';
const orphanName = `hangar-sandbox-${ORPHAN}`;

let server: TestServer;
let k8s: K8sApiStandIn;
let dir: string;
let kubeconfig: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-k8s-sandbox-'));
  k8s = await startK8sApiStandIn();
  kubeconfig = await k8s.writeKubeconfig(dir);
  // A sandbox left behind by a crash (its pod and claim, no row in Hangar's database).
  const labels = { 'app.kubernetes.io/managed-by': 'hangar', 'hangar.dev/component': 'sandbox', 'hangar.dev/sandbox-id': ORPHAN };
  k8s.objects.set(`pods/${NS}/${orphanName}`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: orphanName, namespace: NS, labels }, spec: { containers: [] } });
  k8s.objects.set(`persistentvolumeclaims/${NS}/${orphanName}`, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: orphanName, namespace: NS, labels }, spec: {} });
  // Something else of the namespace, not Hangar's: left alone.
  k8s.objects.set(`pods/${NS}/someone-elses`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'someone-elses', namespace: NS, labels: { app: 'other' } }, spec: { containers: [] } });
  server = await startTestServer({
    env: {
      HANGAR_SANDBOX_DRIVER: 'kubernetes',
      HANGAR_KUBECONFIG: kubeconfig,
      HANGAR_SANDBOX_K8S_NAMESPACE: NS,
      HANGAR_SANDBOX_K8S_IMAGE: 'python:3.12-slim',
      HANGAR_SANDBOX_K8S_CPU: '500m',
      HANGAR_SANDBOX_K8S_VOLUME_SIZE: '2Gi',
      HANGAR_SANDBOX_MEMORY_MB: '768',
      HANGAR_SANDBOX_TMP_MB: '64',
      HANGAR_SANDBOX_TIMEOUT_SECONDS: '3',
      HANGAR_SANDBOX_MAX_OUTPUT_BYTES: '20000',
      HANGAR_SANDBOX_SWEEP_MS: '200',
    },
  });
});
afterAll(async () => {
  await server?.close();
  await k8s?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const sandboxOf = async (threadId: string) => (await server.client.GET('/v1/deepagents/threads/{thread_id}/sandbox', { params: { path: { thread_id: threadId } } })).data!;
const call = (tool: string, args: Record<string, unknown>) => `/call ${tool} ${JSON.stringify(args)}`;

/** Send one message to the thread and return the agent's answer (the model stand-in echoes tool results). */
async function say(agentId: string, threadId: string, text: string): Promise<string> {
  const { events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: text }], stream_mode: ['values'] });
  expect(events.find((e) => e.event === 'error')).toBeUndefined();
  return lastAiText(lastValues(events));
}

async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const v = await probe();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

const podKey = (id: string) => `pods/${NS}/hangar-sandbox-${id}`;
const claimKey = (id: string) => `persistentvolumeclaims/${NS}/hangar-sandbox-${id}`;
const policyKey = (id: string) => `networkpolicies/${NS}/hangar-sandbox-${id}`;
const applied = (kind: string, id: string) =>
  k8s.requests.filter((r) => r.method === 'PATCH' && (r.body as { kind?: string } | undefined)?.kind === kind && r.path.endsWith(`/hangar-sandbox-${id}`));

describe('an agent in a sandbox on the kubernetes driver', () => {
  it('removed the orphaned sandbox (pod and claim) at start, and nothing else', async () => {
    await until('the orphan to be removed', () => !k8s.objects.has(`pods/${NS}/${orphanName}`) && !k8s.objects.has(`persistentvolumeclaims/${NS}/${orphanName}`));
    expect(k8s.requests.some((r) => r.method === 'GET' && r.path === `/api/v1/namespaces/${NS}/pods` && r.query.labelSelector === 'app.kubernetes.io/managed-by=hangar,hangar.dev/component=sandbox')).toBe(true);
    expect(k8s.objects.has(`pods/${NS}/someone-elses`)).toBe(true);
  });

  it('writes a file, runs it with execute and sees its output and exit code; files live on the pod’s volume', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox', sandbox_config: { scope: 'thread' } } });
    const threadId = await createThread(server, agentId);
    expect((await sandboxOf(threadId)).status).toBe('none');

    expect(await say(agentId, threadId, call('write_file', { file_path: '/workspace/hello.py', content: 'import os\nprint("hello from", os.getcwd())\nraise SystemExit(3)\n' }))).toContain('Successfully wrote');
    const out = await say(agentId, threadId, call('execute', { command: 'python3 hello.py' }));
    expect(out).toContain('hello from /workspace');
    expect(out).toContain('[Command failed with exit code 3]');
    // Fixed and run again, in the same conversation.
    expect(await say(agentId, threadId, call('edit_file', { file_path: '/workspace/hello.py', old_string: 'SystemExit(3)', new_string: 'SystemExit(0)' }))).toContain('Successfully replaced');
    expect(await say(agentId, threadId, call('execute', { command: 'python3 hello.py' }))).toBe('Done.\nexecute: hello from /workspace\n\n[Command succeeded with exit code 0]');
    expect(await say(agentId, threadId, call('execute', { command: 'echo out; echo err >&2; id -u' }))).toBe('Done.\nexecute: out\nerr\n1000\n\n[Command succeeded with exit code 0]');
    expect(await say(agentId, threadId, call('read_file', { file_path: '/workspace/hello.py' }))).toContain('print("hello from", os.getcwd())');
    expect(await say(agentId, threadId, call('ls', { path: '/workspace' }))).toContain('/workspace/hello.py');
    // The root file system is read-only: the volume (and /tmp) are the only writable places.
    expect(await say(agentId, threadId, call('execute', { command: 'touch /x' }))).toContain('Read-only file system');

    const status = await sandboxOf(threadId);
    expect(status).toMatchObject({ status: 'running', scope: 'thread', driver: 'kubernetes' });
    expect(status.disk_bytes).toBeGreaterThan(0);
    const id = status.sandbox_id!;
    // The file is on the claim's volume (the stand-in's directory for it), not in Hangar's data.
    expect(await readFile(path.join(k8s.volumeDir(NS, `hangar-sandbox-${id}`), 'hello.py'), 'utf8')).toContain('SystemExit(0)');
    // Commands went through the exec endpoint: /bin/sh -c in the sandbox container; the file
    // upload sent its content on stdin, closed with the v5 protocol's close signal.
    const execs = k8s.execs.filter((e) => e.pod === `hangar-sandbox-${id}`);
    expect(execs.every((e) => e.namespace === NS && e.container === 'sandbox' && e.command[0] === '/bin/sh' && e.command[1] === '-c')).toBe(true);
    expect(execs.some((e) => e.command.at(-1) === 'python3 hello.py' && !e.stdin)).toBe(true);
    expect(execs.some((e) => e.stdin && e.protocol === 'v5.channel.k8s.io')).toBe(true);
  });

  it('streams a command’s output as it comes (stream mode custom)', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox' } });
    const threadId = await createThread(server, agentId);
    const command = 'echo first; sleep 0.5; echo second';
    const { events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: call('execute', { command }) }], stream_mode: ['custom', 'updates'] });
    const custom = events.filter((e) => e.event === 'custom').map((e) => e.data as { sandbox_output: { command: string; text: string } });
    expect(custom.length).toBeGreaterThanOrEqual(2); // one piece per write, not one at the end
    expect(custom.map((c) => c.sandbox_output.text).join('')).toBe('first\nsecond\n');
    const toolUpdate = events.findIndex((e) => e.event === 'updates' && JSON.stringify(e.data).includes('exit code 0'));
    expect(events.findIndex((e) => e.event === 'custom')).toBeLessThan(toolUpdate);
  });

  it('sends a pod that runs as non-root on a read-only root, with no service account token, limits from the settings and a network policy denying egress', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox' } });
    const threadId = await createThread(server, agentId);
    await say(agentId, threadId, call('execute', { command: 'true' }));
    const id = (await sandboxOf(threadId)).sandbox_id!;
    const labels = { 'app.kubernetes.io/managed-by': 'hangar', 'hangar.dev/component': 'sandbox', 'hangar.dev/sandbox-id': id };

    // Applied with server-side apply, the network policy and the claim before the pod.
    const order = k8s.requests
      .filter((r) => r.method === 'PATCH' && r.path.endsWith(`/hangar-sandbox-${id}`))
      .map((r) => {
        expect(r.contentType).toBe('application/apply-patch+yaml');
        expect(r.query).toEqual({ fieldManager: 'hangar', force: 'true' });
        return (r.body as { kind: string }).kind;
      });
    expect(order).toEqual(['NetworkPolicy', 'PersistentVolumeClaim', 'Pod']);

    const pod = applied('Pod', id)[0]!.body as any;
    expect(pod.metadata).toEqual({ name: `hangar-sandbox-${id}`, namespace: NS, labels });
    expect(pod.spec).toMatchObject({
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      hostNetwork: false,
      hostPID: false,
      hostIPC: false,
      securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } },
      volumes: [
        { name: 'work', persistentVolumeClaim: { claimName: `hangar-sandbox-${id}` } },
        { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } },
      ],
    });
    expect(pod.spec.containers).toHaveLength(1);
    const c = pod.spec.containers[0];
    expect(c).toMatchObject({
      name: 'sandbox',
      image: 'python:3.12-slim',
      workingDir: '/workspace',
      securityContext: { runAsNonRoot: true, allowPrivilegeEscalation: false, privileged: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
      resources: { limits: { cpu: '500m', memory: '768Mi', 'ephemeral-storage': '64Mi' } },
      volumeMounts: [
        { name: 'work', mountPath: '/workspace' },
        { name: 'tmp', mountPath: '/tmp' },
      ],
    });
    expect(JSON.stringify(pod)).not.toContain('serviceAccountName');

    const claim = applied('PersistentVolumeClaim', id)[0]!.body as any;
    expect(claim).toMatchObject({ metadata: { labels }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } } });
    const policy = applied('NetworkPolicy', id)[0]!.body as any;
    expect(policy).toMatchObject({ apiVersion: 'networking.k8s.io/v1', metadata: { labels } });
    expect(policy.spec).toEqual({ podSelector: { matchLabels: { 'hangar.dev/sandbox-id': id } }, policyTypes: ['Ingress', 'Egress'], ingress: [], egress: [] });
    // With egress denied, the stand-in starts the command without a network: Hangar's own port is unreachable.
    const port = new URL(server.url).port;
    const reach = await say(agentId, threadId, call('execute', { command: `python3 -c "import socket; socket.create_connection(('127.0.0.1', ${port}), 2)"` }));
    expect(reach).toMatch(/Network is unreachable|Connection refused/);
  });

  it('the allow-network policy gives the sandbox an egress rule to public addresses, not to private ranges', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox', sandbox_config: { policy_ids: ['allow-network'] } } });
    const threadId = await createThread(server, agentId);
    await say(agentId, threadId, call('execute', { command: 'true' }));
    const id = (await sandboxOf(threadId)).sandbox_id!;
    const policy = applied('NetworkPolicy', id)[0]!.body as any;
    expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy.spec.ingress).toEqual([]);
    expect(policy.spec.egress[0].to[0].ipBlock).toEqual({ cidr: '0.0.0.0/0', except: expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '127.0.0.0/8']) });
    expect(policy.spec.egress[1]).toMatchObject({ ports: [{ protocol: 'UDP', port: 53 }, { protocol: 'TCP', port: 53 }] });
  });

  it('reports a command beyond the timeout or the output cap as a stopped command the model reads; the run goes on', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox' } });
    const threadId = await createThread(server, agentId);
    const out = await say(agentId, threadId, call('execute', { command: 'echo started; sleep 4; echo never > late.txt' }));
    expect(out).toContain('started');
    expect(out).toContain("[Command stopped: it ran longer than the sandbox's limit of 3 s]");
    // The stand-in, like a kubelet, lets a command run on when its stream closes: Hangar killed it
    // in the pod (a second exec), so it never wrote its file — checked after a command that
    // outlasts the stopped one's 4 s.
    expect(await say(agentId, threadId, call('execute', { command: 'sleep 2; ls -A' }))).not.toContain('late.txt');
    // The command was also given the pod's own timeout as a backstop (coreutils timeout, KILL).
    const id = (await sandboxOf(threadId)).sandbox_id!;
    const exec = k8s.execs.find((e) => e.pod === `hangar-sandbox-${id}` && e.command.at(-1)!.includes('sleep 4'))!;
    expect(exec.command[2]).toContain('exec timeout -s KILL 8 /bin/sh -c "$1"');
    // The output cap holds as with the local driver: the command is stopped beyond it.
    const flood = await say(agentId, threadId, call('execute', { command: 'head -c 100000 /dev/zero | tr "\\0" x; echo never' }));
    expect(flood).toContain("[Command stopped: its output went beyond the sandbox's limit of 20000 bytes]");
    expect(flood).toContain('x'.repeat(1000));
    expect(flood).toContain('[Output was truncated due to size limits]');
    expect(flood).not.toContain('never');
    // The thread goes on: the next command runs.
    expect(await say(agentId, threadId, call('execute', { command: 'echo after' }))).toContain('execute: after');
  });

  it('stops an idle sandbox by deleting its pod and keeping its volume; the next command starts a pod that finds the files', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox', sandbox_config: { idle_ttl_seconds: 1, delete_after_stop_seconds: 3600 } } });
    const threadId = await createThread(server, agentId);
    await say(agentId, threadId, call('execute', { command: 'echo kept > file.txt' }));
    const id = (await sandboxOf(threadId)).sandbox_id!;
    expect(applied('Pod', id)).toHaveLength(1);
    // The sweeper marks the sandbox stopped, then deletes its pod: wait for both.
    await until('the sandbox to stop', async () => (await sandboxOf(threadId)).status === 'stopped' && !k8s.objects.has(podKey(id)));
    expect(k8s.requests.some((r) => r.method === 'DELETE' && r.path === `/api/v1/namespaces/${NS}/pods/hangar-sandbox-${id}`)).toBe(true);
    expect(k8s.objects.has(podKey(id))).toBe(false);
    expect(k8s.objects.has(claimKey(id))).toBe(true);
    expect(k8s.objects.has(policyKey(id))).toBe(true);

    expect(await say(agentId, threadId, call('execute', { command: 'cat file.txt' }))).toContain('execute: kept');
    expect(applied('Pod', id)).toHaveLength(2);
    expect((await sandboxOf(threadId)).sandbox_id).toBe(id);
  });

  it('does not stop a sandbox whose command runs longer than its idle TTL', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox', sandbox_config: { idle_ttl_seconds: 1, delete_after_stop_seconds: 3600 } } });
    const threadId = await createThread(server, agentId);
    // The sweeper runs every 200 ms; the command outlives the 1 s idle TTL and must keep its pod.
    expect(await say(agentId, threadId, call('execute', { command: 'sleep 2; echo finished' }))).toBe('Done.\nexecute: finished\n\n[Command succeeded with exit code 0]');
    const id = (await sandboxOf(threadId)).sandbox_id!;
    expect(applied('Pod', id)).toHaveLength(1);
  });

  it('DELETE /threads/{id}/sandbox removes the pod, the volume and the network policy; deleting a thread does too', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox' } });
    const reset = await createThread(server, agentId);
    await say(agentId, reset, call('execute', { command: 'echo x > y' }));
    const id = (await sandboxOf(reset)).sandbox_id!;
    const volume = k8s.volumeDir(NS, `hangar-sandbox-${id}`);
    expect(existsSync(path.join(volume, 'y'))).toBe(true);
    const res = await server.client.DELETE('/v1/deepagents/threads/{thread_id}/sandbox', { params: { path: { thread_id: reset } } });
    expect(res.response.status).toBe(204);
    expect((await sandboxOf(reset)).status).toBe('none');
    for (const key of [podKey(id), claimKey(id), policyKey(id)]) expect(k8s.objects.has(key), key).toBe(false);
    expect(existsSync(volume)).toBe(false);
    // The next command starts afresh, on a new volume.
    expect(await say(agentId, reset, call('execute', { command: 'ls -A | wc -l' }))).toContain('execute: 0\n');

    const gone = await createThread(server, agentId);
    await say(agentId, gone, call('execute', { command: 'true' }));
    const goneId = (await sandboxOf(gone)).sandbox_id!;
    expect((await server.client.DELETE('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: gone } } })).response.status).toBe(204);
    await until('the thread’s sandbox objects to be removed', () => ![podKey(goneId), claimKey(goneId), policyKey(goneId)].some((k) => k8s.objects.has(k)));
  });
});

describe('sandbox pods that fail or disappear', () => {
  it('a pod whose image cannot be pulled fails the command with the reason; the next command, once it can, runs', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox' } });
    const threadId = await createThread(server, agentId);
    k8s.podWaiting = { reason: 'ErrImagePull', message: 'pull access denied for python:3.12-slim' };
    try {
      const out = await say(agentId, threadId, call('execute', { command: 'echo hi' }));
      expect(out).toContain('Error: the command could not run: the sandbox pod cannot start: ErrImagePull: pull access denied for python:3.12-slim');
    } finally {
      k8s.podWaiting = null;
    }
    // The failed pod was deleted: the next command makes a fresh one.
    const id = (await sandboxOf(threadId)).sandbox_id!;
    expect(k8s.requests.some((r) => r.method === 'DELETE' && r.path === `/api/v1/namespaces/${NS}/pods/hangar-sandbox-${id}`)).toBe(true);
    expect(await say(agentId, threadId, call('execute', { command: 'echo hi' }))).toContain('execute: hi');
    expect(applied('Pod', id)).toHaveLength(2);
  });

  it('a command whose run is cancelled while its pod is starting never runs', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox' } });
    const threadId = await createThread(server, agentId);
    k8s.podWaiting = { reason: 'ContainerCreating', message: '' }; // a pod on its way, not a failure
    try {
      const stream = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: call('execute', { command: 'touch ran.txt' }) }] });
      expect(stream.status).toBe(200);
      const id = await until('the sandbox to be made', async () => (await sandboxOf(threadId)).sandbox_id ?? undefined);
      await until('its pod to be applied', async () => applied('Pod', id).length > 0);
      const cancelled = await server.client.POST('/v1/deepagents/threads/{thread_id}/runs/{run_id}/cancel', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
      expect(cancelled.response.status).toBeLessThan(300);
      await collect(stream);
      k8s.podWaiting = null; // the pod runs now
      // Hangar went on waiting for the pod and recorded the command's end; the command never ran.
      await until('the command to be recorded', async () => ((await sandboxOf(threadId)).commands ?? 0) >= 1);
      expect(existsSync(path.join(k8s.volumeDir(NS, `hangar-sandbox-${id}`), 'ran.txt'))).toBe(false);
    } finally {
      k8s.podWaiting = null;
    }
  });

  it('a sandbox whose pod takes longer to start than its idle TTL is not stopped while it starts', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox', sandbox_config: { idle_ttl_seconds: 1 } } });
    const threadId = await createThread(server, agentId);
    k8s.podWaiting = { reason: 'ContainerCreating', message: '' }; // a slow image pull, say
    let answer: Promise<string> | undefined;
    try {
      answer = say(agentId, threadId, call('execute', { command: 'echo started' }));
      const id = await until('the sandbox to be made', async () => (await sandboxOf(threadId)).sandbox_id ?? undefined);
      // Past the idle TTL (1 s) by several sweeps (every 200 ms) while the pod is still starting (from
      // its creation: its last use moves on while a command is in flight).
      await until('the idle TTL to pass', async () => Date.now() - Date.parse((await sandboxOf(threadId)).created_at!) > 2500);
      expect((await sandboxOf(threadId)).status).toBe('running');
      expect(k8s.requests.some((r) => r.method === 'DELETE' && r.path === `/api/v1/namespaces/${NS}/pods/hangar-sandbox-${id}`)).toBe(false);
    } finally {
      k8s.podWaiting = null;
    }
    expect(await answer).toContain('execute: started');
  });

  it('a pod deleted under Hangar is made again at the next command, on the same volume', async () => {
    const agentId = await createAgent(server, { backend: { type: 'sandbox' } });
    const threadId = await createThread(server, agentId);
    await say(agentId, threadId, call('execute', { command: 'echo survived > note.txt' }));
    const id = (await sandboxOf(threadId)).sandbox_id!;
    // Deleted by someone else (kubectl delete pod, an eviction): straight at the API server.
    const res = await undiciFetch(`${k8s.url}/api/v1/namespaces/${NS}/pods/hangar-sandbox-${id}`, { method: 'DELETE', headers: { authorization: 'Bearer standin-token' }, dispatcher: insecure });
    expect(res.status).toBe(200);
    expect(await say(agentId, threadId, call('execute', { command: 'cat note.txt' }))).toContain('execute: survived');
    expect(applied('Pod', id)).toHaveLength(2);
  });
});

describe('the kubernetes sandbox driver on an API server without v5.channel.k8s.io', () => {
  it('embeds a command’s input in the command, since v4 cannot close stdin', async () => {
    const driver = new KubernetesSandboxDriver({
      kubeconfig,
      namespace: 'older',
      image: 'python:3.12-slim',
      cpu: '1',
      volumeSize: '1Gi',
      runAsUser: 1000,
      startTimeoutMs: 30_000,
      pollMs: 20,
      limits: { cpuSeconds: 10, memoryBytes: 512 * 1024 * 1024, maxProcesses: 64, maxFileBytes: 1024 * 1024, maxOutputBytes: 10_000, timeoutMs: 10_000, tmpBytes: 16 * 1024 * 1024 },
    });
    k8s.execProtocols = ['v4.channel.k8s.io'];
    try {
      const ref = { id: '0f0f0f0f-0000-4000-8000-0000000000a4', slot: 0 };
      await driver.ensure(ref);
      const written = await driver.exec(ref, { command: 'cat > in.txt && wc -c < in.txt', stdin: Buffer.from('hello, v4\n') });
      expect(written.output.toString().trim()).toBe('10');
      expect(written.exitCode).toBe(0);
      expect(await readFile(path.join(k8s.volumeDir('older', `hangar-sandbox-${ref.id}`), 'in.txt'), 'utf8')).toBe('hello, v4\n');
      const execs = k8s.execs.filter((e) => e.namespace === 'older');
      expect(execs.every((e) => e.protocol === 'v4.channel.k8s.io' && !e.stdin)).toBe(true);
      await driver.remove(ref.id);
      expect(await driver.list()).not.toContain(ref.id);
    } finally {
      k8s.execProtocols = ['v5.channel.k8s.io', 'v4.channel.k8s.io'];
    }
  });
});

describe('the kubernetes sandbox driver without a cluster', () => {
  it('says why it cannot work, which the sandbox service passes on to the model', async () => {
    const driver = new KubernetesSandboxDriver({
      kubeconfig: path.join(dir, 'no-such-kubeconfig'),
      namespace: 'x',
      image: 'python:3.12-slim',
      cpu: '1',
      volumeSize: '1Gi',
      runAsUser: 1000,
      startTimeoutMs: 1000,
      limits: { cpuSeconds: 1, memoryBytes: 1 << 28, maxProcesses: 1, maxFileBytes: 1 << 20, maxOutputBytes: 1000, timeoutMs: 1000, tmpBytes: 1 << 20 },
    });
    expect(await driver.unavailable()).toMatch(/^the kubernetes sandbox driver cannot reach a cluster: .*no-such-kubeconfig/);
  });
});
