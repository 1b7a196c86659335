// A STAND-IN for a Kubernetes API server, for tests only: no cluster (and no container runtime to
// run one) is available on this machine. It answers the few endpoints the Kubernetes driver uses the
// way the real API server does: API discovery (`GET /api/v1`, `GET /apis/<group>/<version>`),
// server-side apply (`PATCH .../namespaces/<ns>/<resource>/<name>` with
// `application/apply-patch+yaml`, echoing the object back with uid/resourceVersion/generation),
// GET of an applied object (Deployments carry a status the test controls) and DELETE. As a cluster
// would, it refuses a change to a StatefulSet's claim templates, selector or serviceName, and makes
// a StatefulSet's claims (labelled with its selector) as the StatefulSet controller does. It records
// every request so tests can assert exactly what the driver sent. Like a real API server it serves
// HTTPS (a self-signed certificate made with `openssl`, trusted through the kubeconfig's
// certificate-authority-data) and wants a bearer token.
//
// For the sandbox driver it also keeps pods, claims and network policies: LIST by label selector; a
// pod reads Pending once after it is made, then Running; and the exec endpoint
// (`GET .../pods/<name>/exec`, upgraded to a WebSocket) speaks the real Kubernetes exec protocol
// (v5.channel.k8s.io / v4.channel.k8s.io: channel 0 stdin, 1 stdout, 2 stderr, 3 the exit Status,
// 255 close-stdin in v5). It runs the command FOR REAL on this machine, with bubblewrap, in a
// stand-in for the pod: a local temporary directory per claim is bound where the pod mounts the
// claim, the host's /usr and /etc are the image, the root is read-only when the pod asks for it, the
// command runs as the pod's runAsUser (in a user namespace), emptyDir volumes are a directory per pod
// (made and removed with it), and the pod gets no network when a NetworkPolicy selecting it allows
// no egress. When the client closes the stream, the command runs on, as a kubelet may let it (the
// driver kills a command it stops through a second exec, with an in-pod timeout as a backstop);
// deleting the pod kills its commands.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { lstatSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

/** One request received by the stand-in. */
export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  contentType: string | undefined;
  authorization: string | undefined;
  body: unknown;
}

/** Kinds the stand-in serves, per API group version: kind → plural resource name. */
const RESOURCES: Record<string, Record<string, string>> = {
  v1: { Secret: 'secrets', Service: 'services', PersistentVolumeClaim: 'persistentvolumeclaims', Pod: 'pods' },
  'networking.k8s.io/v1': { NetworkPolicy: 'networkpolicies' },
  'apps/v1': { Deployment: 'deployments', StatefulSet: 'statefulsets' },
  'autoscaling/v2': { HorizontalPodAutoscaler: 'horizontalpodautoscalers' },
};

/** Readiness the stand-in reports for a Deployment it has stored. */
export type Readiness = 'ready' | 'not-ready';

/** The running stand-in. */
export interface K8sApiStandIn {
  url: string;
  requests: RecordedRequest[];
  /** Applied objects by `<resource>/<namespace>/<name>`. */
  objects: Map<string, Record<string, unknown>>;
  /** Readiness reported for every Deployment (default 'ready'). */
  readiness: Readiness;
  /** Readiness reported for every StatefulSet (a deployment's database; default 'ready'). */
  databaseReadiness: Readiness;
  /** Kinds whose apply is refused with 422 Invalid, as an API server rejects an invalid object. */
  rejectKinds: Set<string>;
  /** Exec requests answered (pod, command, the subprotocol agreed, whether stdin was asked for). */
  execs: { namespace: string; pod: string; container: string; command: string[]; stdin: boolean; protocol: string }[];
  /** Exec subprotocols the stand-in agrees to, best first (default v5 then v4, as a current API server). */
  execProtocols: string[];
  /** When set, pods stay Pending with this reason on their container (an image that cannot be pulled, say). */
  podWaiting: { reason: string; message: string } | null;
  /**
   * Hold the next apply of an object of this kind until `release` is called; `arrived` resolves when
   * that apply has reached the stand-in (it is stored only once released, as a slow API server would).
   */
  holdApply(kind: string): { arrived: Promise<void>; release: () => void };
  /** The local directory standing for a claim's volume (`<namespace>/<claim name>`). */
  volumeDir(namespace: string, claim: string): string;
  /** Resolves once a GET of the named Deployment has been answered while not ready. */
  polledNotReady(name: string): Promise<void>;
  /** Writes a kubeconfig pointing at the stand-in (with a bearer token) into `dir`; returns its path. */
  writeKubeconfig(dir: string): Promise<string>;
  close(): Promise<void>;
}

const TOKEN = 'standin-token';

const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

const statusBody = (code: number, reason: string, message: string) => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });

/** A self-signed certificate for 127.0.0.1 (the client refuses plain HTTP unless TLS checks are off). */
async function selfSigned(): Promise<{ key: string; cert: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'hangar-k8s-tls-'));
  try {
    await promisify(execFile)('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ]);
    return { key: await readFile(join(dir, 'key.pem'), 'utf8'), cert: await readFile(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Start the stand-in on a free port of 127.0.0.1. */
export async function startK8sApiStandIn(): Promise<K8sApiStandIn> {
  const tls = await selfSigned();
  const waiters: { name: string; resolve: () => void }[] = [];
  const holds: { kind: string; arrived: () => void; released: Promise<void> }[] = [];
  const state: Omit<K8sApiStandIn, 'url' | 'close' | 'writeKubeconfig' | 'polledNotReady' | 'volumeDir' | 'holdApply'> = {
    requests: [],
    objects: new Map(),
    readiness: 'ready',
    databaseReadiness: 'ready',
    rejectKinds: new Set(),
    execs: [],
    execProtocols: ['v5.channel.k8s.io', 'v4.channel.k8s.io'],
    podWaiting: null,
  };
  const volumes = await mkdtemp(join(tmpdir(), 'hangar-k8s-volumes-'));
  const volumeDir = (ns: string, claim: string) => join(volumes, ns, claim);
  /** A pod's emptyDir volume: a directory made with the pod, removed with it. */
  const emptyDir = (podKey: string, volume: string) => join(volumes, '.pods', podKey.replaceAll('/', '_'), volume);
  /** Pods reported Running (a pod reads Pending once first). */
  const podsRunning = new Set<string>();
  /** Commands running, per pod key. */
  const processes = new Map<string, Set<ChildProcess>>();

  const server: Server = createServer(tls, async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? '/', 'http://standin');
    const raw = Buffer.concat(chunks).toString('utf8');
    const rec: RecordedRequest = {
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      contentType: req.headers['content-type'],
      authorization: req.headers.authorization,
      // Apply bodies are YAML; the client sends JSON, which is YAML too.
      body: raw ? JSON.parse(raw) : undefined,
    };
    state.requests.push(rec);
    if (rec.authorization !== `Bearer ${TOKEN}`) return json(res, 401, statusBody(401, 'Unauthorized', 'Unauthorized'));

    // Discovery.
    const disc = /^\/(?:api\/(v1)|apis\/([^/]+\/[^/]+))$/.exec(rec.path);
    if (disc && rec.method === 'GET') {
      const gv = disc[1] ?? disc[2]!;
      const kinds = RESOURCES[gv];
      if (!kinds) return json(res, 404, statusBody(404, 'NotFound', 'the server could not find the requested resource'));
      return json(res, 200, {
        kind: 'APIResourceList',
        apiVersion: 'v1',
        groupVersion: gv,
        resources: Object.entries(kinds).map(([kind, name]) => ({ name, singularName: kind.toLowerCase(), namespaced: true, kind, verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] })),
      });
    }

    const list = /^\/(?:api\/v1|apis\/[^/]+\/[^/]+)\/namespaces\/([^/]+)\/([^/]+)$/.exec(rec.path);
    if (list && rec.method === 'GET') {
      const [, ns, resource] = list as unknown as [string, string, string];
      const wanted = (rec.query.labelSelector ?? '').split(',').filter(Boolean).map((p) => p.split('=') as [string, string]);
      const items = [...state.objects.entries()]
        .filter(([k]) => k.startsWith(`${resource}/${ns}/`))
        .map(([, o]) => o as { metadata: { labels?: Record<string, string> } })
        .filter((o) => wanted.every(([k, v]) => o.metadata.labels?.[k] === v));
      return json(res, 200, { kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: String(state.requests.length) }, items });
    }
    const m = /^\/(?:api\/v1|apis\/[^/]+\/[^/]+)\/namespaces\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(rec.path);
    if (!m) return json(res, 404, statusBody(404, 'NotFound', 'the server could not find the requested resource'));
    const [, ns, resource, name] = m as unknown as [string, string, string, string];
    const key = `${resource}/${ns}/${name}`;

    if (rec.method === 'PATCH') {
      if (rec.contentType !== 'application/apply-patch+yaml') return json(res, 415, statusBody(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/apply-patch+yaml`));
      if (!rec.query.fieldManager) return json(res, 422, statusBody(422, 'Invalid', 'fieldManager is required for apply requests'));
      const obj = rec.body as { kind: string; metadata: Record<string, unknown> };
      if (state.rejectKinds.has(obj.kind)) {
        return json(res, 422, statusBody(422, 'Invalid', `${obj.kind}.${resource} "${name}" is invalid: spec: Invalid value: rejected by the stand-in`));
      }
      const hold = holds.findIndex((h) => h.kind === obj.kind);
      if (hold >= 0) {
        const [h] = holds.splice(hold, 1);
        h!.arrived();
        await h!.released;
      }
      const prev = state.objects.get(key) as { metadata: Record<string, unknown>; spec?: Record<string, unknown> } | undefined;
      // As the API server: a StatefulSet's claim templates (like its selector and serviceName) cannot change.
      if (resource === 'statefulsets' && prev) {
        const spec = (obj as { spec?: Record<string, unknown> }).spec ?? {};
        for (const field of ['volumeClaimTemplates', 'selector', 'serviceName']) {
          if (JSON.stringify(spec[field] ?? null) !== JSON.stringify(prev.spec?.[field] ?? null)) {
            return json(res, 422, statusBody(422, 'Invalid', `StatefulSet.apps "${name}" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden`));
          }
        }
      }
      const generation = ((prev?.metadata.generation as number | undefined) ?? 0) + 1;
      const stored = {
        ...obj,
        metadata: { ...obj.metadata, uid: (prev?.metadata.uid as string | undefined) ?? randomUUID(), resourceVersion: String(state.requests.length), generation, creationTimestamp: new Date().toISOString() },
      };
      state.objects.set(key, stored);
      if (resource === 'persistentvolumeclaims') await mkdir(volumeDir(ns, name), { recursive: true });
      if (resource === 'statefulsets') {
        // As the StatefulSet controller: a claim per template for its one replica, named
        // <template>-<statefulset>-0 and labelled with the StatefulSet's selector; made once, kept.
        const spec = (obj as unknown as { spec: { selector?: { matchLabels?: Record<string, string> }; volumeClaimTemplates?: { metadata: { name: string; labels?: Record<string, string> }; spec: unknown }[] } }).spec;
        for (const t of spec.volumeClaimTemplates ?? []) {
          const claim = `${t.metadata.name}-${name}-0`;
          const claimKey = `persistentvolumeclaims/${ns}/${claim}`;
          if (state.objects.has(claimKey)) continue;
          state.objects.set(claimKey, {
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            metadata: { name: claim, namespace: ns, labels: { ...(t.metadata.labels ?? {}), ...(spec.selector?.matchLabels ?? {}) }, uid: randomUUID(), generation: 1 },
            spec: t.spec,
          });
          await mkdir(volumeDir(ns, claim), { recursive: true });
        }
      }
      if (resource === 'pods') {
        for (const v of (stored as unknown as PodObject).spec.volumes ?? []) if (v.emptyDir) await mkdir(emptyDir(key, v.name), { recursive: true, mode: 0o1777 });
      }
      return json(res, prev ? 200 : 201, stored);
    }
    if (rec.method === 'GET') {
      const obj = state.objects.get(key) as { spec?: { replicas?: number }; metadata: { generation: number } } | undefined;
      if (!obj) return json(res, 404, statusBody(404, 'NotFound', `${resource} "${name}" not found`));
      if (resource === 'statefulsets') {
        const replicas = obj.spec?.replicas ?? 1;
        const ready = state.databaseReadiness === 'ready' ? replicas : 0;
        return json(res, 200, { ...obj, status: { observedGeneration: obj.metadata.generation, replicas, readyReplicas: ready, availableReplicas: ready } });
      }
      if (resource === 'pods') {
        if (state.podWaiting) return json(res, 200, { ...obj, status: { phase: 'Pending', containerStatuses: [{ name: 'sandbox', ready: false, state: { waiting: state.podWaiting } }] } });
        // Pending at the first read after it is made, Running from then on.
        if (!podsRunning.has(key)) {
          podsRunning.add(key);
          return json(res, 200, { ...obj, status: { phase: 'Pending', containerStatuses: [{ name: 'sandbox', ready: false, state: { waiting: { reason: 'ContainerCreating' } } }] } });
        }
        return json(res, 200, { ...obj, status: { phase: 'Running', containerStatuses: [{ name: 'sandbox', ready: true, state: { running: { startedAt: new Date().toISOString() } } }] } });
      }
      if (resource !== 'deployments') return json(res, 200, obj);
      const replicas = obj.spec?.replicas ?? 1;
      const ready = state.readiness === 'ready';
      const status = ready
        ? { observedGeneration: obj.metadata.generation, replicas, updatedReplicas: replicas, readyReplicas: replicas, availableReplicas: replicas }
        : { observedGeneration: obj.metadata.generation, replicas, updatedReplicas: replicas, readyReplicas: 0, availableReplicas: 0, unavailableReplicas: replicas };
      json(res, 200, { ...obj, status });
      if (!ready) for (const w of waiters.filter((x) => x.name === name)) w.resolve();
      return;
    }
    if (rec.method === 'DELETE') {
      const existed = state.objects.delete(key);
      if (resource === 'pods') {
        podsRunning.delete(key);
        for (const child of processes.get(key) ?? []) child.kill('SIGKILL');
        await rm(join(volumes, '.pods', key.replaceAll('/', '_')), { recursive: true, force: true });
      }
      if (resource === 'persistentvolumeclaims') await rm(volumeDir(ns, name), { recursive: true, force: true });
      return existed ? json(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' }) : json(res, 404, statusBody(404, 'NotFound', `${resource} "${name}" not found`));
    }
    return json(res, 405, statusBody(405, 'MethodNotAllowed', 'method not allowed'));
  });

  // The exec endpoint: a WebSocket upgrade of GET .../pods/<name>/exec.
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered: Set<string>) => state.execProtocols.find((p) => offered.has(p)) ?? false,
  });
  const refuse = (socket: Duplex, code: number, reason: string, message: string) => {
    const body = JSON.stringify(statusBody(code, reason, message));
    socket.end(`HTTP/1.1 ${code} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  };
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://standin');
    state.requests.push({ method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), contentType: undefined, authorization: req.headers.authorization, body: undefined });
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return refuse(socket, 401, 'Unauthorized', 'Unauthorized');
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/exec$/.exec(url.pathname);
    if (!m) return refuse(socket, 404, 'NotFound', 'the server could not find the requested resource');
    const [, ns, name] = m as unknown as [string, string, string];
    const key = `pods/${ns}/${name}`;
    const pod = state.objects.get(key) as PodObject | undefined;
    if (!pod) return refuse(socket, 404, 'NotFound', `pods "${name}" not found`);
    if (!podsRunning.has(key)) return refuse(socket, 400, 'BadRequest', `pod ${name} is not running`);
    const command = url.searchParams.getAll('command');
    const container = url.searchParams.get('container') ?? '';
    const c = pod.spec.containers.find((x) => x.name === container);
    if (!c || command.length === 0) return refuse(socket, 400, 'BadRequest', `container ${container} is not valid for pod ${name}`);
    const stdin = url.searchParams.get('stdin') === 'true';
    wss.handleUpgrade(req, socket, head, (ws) => {
      state.execs.push({ namespace: ns, pod: name, container, command, stdin, protocol: ws.protocol });
      runInPod(ws, ns, key, pod, c, command, stdin);
    });
  });

  /** Run `command` for real, in the stand-in for the pod, speaking the exec channels on `ws`. */
  const runInPod = (ws: WebSocket, ns: string, key: string, pod: PodObject, c: PodObject['spec']['containers'][number], command: string[], stdin: boolean) => {
    const user = c.securityContext?.runAsUser ?? pod.spec.securityContext?.runAsUser ?? 0;
    // No PID namespace of its own: the commands of one pod must see each other's processes, as they
    // do in a pod (here they see the host's too — a simplification of the stand-in).
    const args = ['--unshare-user', '--uid', String(user), '--gid', String(user), '--unshare-ipc', '--die-with-parent', '--new-session', ...systemBinds(), '--proc', '/proc', '--dev', '/dev'];
    for (const mount of c.volumeMounts ?? []) {
      const v = pod.spec.volumes?.find((x) => x.name === mount.name);
      if (v?.persistentVolumeClaim) args.push('--bind', volumeDir(ns, v.persistentVolumeClaim.claimName), mount.mountPath);
      else if (v?.emptyDir) args.push('--bind', emptyDir(key, v.name), mount.mountPath);
    }
    if (c.securityContext?.readOnlyRootFilesystem) args.push('--remount-ro', '/');
    if (!egressAllowed(ns, pod)) args.push('--unshare-net');
    for (const e of c.env ?? []) args.push('--setenv', e.name, e.value);
    args.push('--chdir', c.workingDir ?? '/', '--', ...command);
    const child = spawn('bwrap', args, { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: '/usr/local/bin:/usr/bin:/bin' } });
    if (!processes.has(key)) processes.set(key, new Set());
    processes.get(key)!.add(child);
    const send = (channel: number, data: Buffer) => {
      if (ws.readyState === ws.OPEN) ws.send(Buffer.concat([Buffer.from([channel]), data]));
    };
    child.stdout.on('data', (d: Buffer) => send(1, d));
    child.stderr.on('data', (d: Buffer) => send(2, d));
    child.stdin.on('error', () => {});
    if (!stdin) child.stdin.end();
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const buf = isBinary ? data : Buffer.from(data.toString(), 'utf8');
      if (buf[0] === 0 && stdin) child.stdin.write(buf.subarray(1));
      else if (buf[0] === 255 && buf[1] === 0 && ws.protocol === 'v5.channel.k8s.io') child.stdin.end();
    });
    ws.on('close', () => {
      // The command runs on (its output goes nowhere), as a kubelet may let it.
      child.stdin.end();
    });
    child.on('close', (code, signal) => {
      processes.get(key)?.delete(child);
      const exit = code ?? 128 + (signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : 1);
      const status =
        exit === 0
          ? { metadata: {}, status: 'Success' }
          : {
              metadata: {},
              status: 'Failure',
              message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${exit}`,
              reason: 'NonZeroExitCode',
              details: { causes: [{ reason: 'ExitCode', message: String(exit) }] },
            };
      send(3, Buffer.from(JSON.stringify(status)));
      if (ws.readyState === ws.OPEN) ws.close(1000);
    });
  };

  /** Whether a NetworkPolicy of the namespace selects the pod and allows it egress (none: open, as Kubernetes). */
  const egressAllowed = (ns: string, pod: PodObject): boolean => {
    const policies = [...state.objects.entries()]
      .filter(([k]) => k.startsWith(`networkpolicies/${ns}/`))
      .map(([, o]) => o as { spec: { podSelector?: { matchLabels?: Record<string, string> }; policyTypes?: string[]; egress?: unknown[] } })
      .filter((p) => p.spec.policyTypes?.includes('Egress') && Object.entries(p.spec.podSelector?.matchLabels ?? {}).every(([k, v]) => pod.metadata.labels?.[k] === v));
    return policies.length === 0 || policies.some((p) => (p.spec.egress ?? []).length > 0);
  };

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return Object.assign(state, {
    url,
    polledNotReady: (name: string) => new Promise<void>((resolve) => waiters.push({ name, resolve })),
    holdApply(kind: string) {
      let arrived!: () => void;
      let release!: () => void;
      const a = new Promise<void>((r) => (arrived = r));
      const released = new Promise<void>((r) => (release = r));
      holds.push({ kind, arrived, released });
      return { arrived: a, release };
    },
    async writeKubeconfig(dir: string) {
      const file = join(dir, 'kubeconfig.json');
      const kc = {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'standin', cluster: { server: url, 'certificate-authority-data': Buffer.from(tls.cert).toString('base64') } }],
        users: [{ name: 'hangar', user: { token: TOKEN } }],
        contexts: [{ name: 'standin', context: { cluster: 'standin', user: 'hangar' } }],
        'current-context': 'standin',
      };
      await writeFile(file, JSON.stringify(kc));
      return file;
    },
    volumeDir,
    async close() {
      for (const set of processes.values()) for (const child of set) child.kill('SIGKILL');
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      await new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
      await rm(volumes, { recursive: true, force: true });
    },
  }) as K8sApiStandIn;
}

/** The parts of a pod the exec stand-in reads. */
interface PodObject {
  metadata: { labels?: Record<string, string> };
  spec: {
    securityContext?: { runAsUser?: number };
    volumes?: { name: string; persistentVolumeClaim?: { claimName: string }; emptyDir?: unknown }[];
    containers: {
      name: string;
      workingDir?: string;
      env?: { name: string; value: string }[];
      securityContext?: { runAsUser?: number; readOnlyRootFilesystem?: boolean };
      volumeMounts?: { name: string; mountPath: string }[];
    }[];
  };
}

/** The host's system, read-only, as the stand-in's "image" (/bin, /lib… mirrored as the host has them). */
function systemBinds(): string[] {
  const args = ['--ro-bind', '/usr', '/usr', '--ro-bind', '/etc', '/etc'];
  for (const top of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
    let st;
    try {
      st = lstatSync(top);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) args.push('--symlink', readlinkSync(top), top);
    else if (st.isDirectory()) args.push('--ro-bind', top, top);
  }
  return args;
}
