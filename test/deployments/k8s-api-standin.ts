// A STAND-IN for a Kubernetes API server, for tests only: no cluster (and no container runtime to
// run one) is available on this machine. It answers the few endpoints the Kubernetes driver uses the
// way the real API server does: API discovery (`GET /api/v1`, `GET /apis/<group>/<version>`),
// server-side apply (`PATCH .../namespaces/<ns>/<resource>/<name>` with
// `application/apply-patch+yaml`, echoing the object back with uid/resourceVersion/generation),
// GET of an applied object (Deployments carry a status the test controls) and DELETE. It records
// every request so tests can assert exactly what the driver sent. Like a real API server it serves
// HTTPS (a self-signed certificate made with `openssl`, trusted through the kubeconfig's
// certificate-authority-data) and wants a bearer token.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

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
  v1: { Secret: 'secrets', Service: 'services', PersistentVolumeClaim: 'persistentvolumeclaims' },
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
  const state: Omit<K8sApiStandIn, 'url' | 'close' | 'writeKubeconfig' | 'polledNotReady'> = { requests: [], objects: new Map(), readiness: 'ready', databaseReadiness: 'ready', rejectKinds: new Set() };

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
      const prev = state.objects.get(key) as { metadata: Record<string, unknown> } | undefined;
      const generation = ((prev?.metadata.generation as number | undefined) ?? 0) + 1;
      const stored = {
        ...obj,
        metadata: { ...obj.metadata, uid: (prev?.metadata.uid as string | undefined) ?? randomUUID(), resourceVersion: String(state.requests.length), generation, creationTimestamp: new Date().toISOString() },
      };
      state.objects.set(key, stored);
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
      return existed ? json(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' }) : json(res, 404, statusBody(404, 'NotFound', `${resource} "${name}" not found`));
    }
    return json(res, 405, statusBody(405, 'MethodNotAllowed', 'method not allowed'));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return Object.assign(state, {
    url,
    polledNotReady: (name: string) => new Promise<void>((resolve) => waiters.push({ name, resolve })),
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
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  }) as K8sApiStandIn;
}
