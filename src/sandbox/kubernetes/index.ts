// The Kubernetes sandbox driver: one pod per sandbox, commands through the Kubernetes API's exec
// (`/api/v1/namespaces/{ns}/pods/{name}/exec`, a WebSocket multiplexing stdin, stdout, stderr and the
// exit status on channels), through @kubernetes/client-node — the client the deployment driver uses,
// with the same cluster configuration (HANGAR_KUBECONFIG).
//
// A sandbox is three objects, applied with server-side apply and labelled so that the ones orphaned
// by a crash are found at start (`list`) and removed:
// - a NetworkPolicy selecting its pod: no ingress, and no egress unless a policy allows it;
// - a PersistentVolumeClaim, its work volume at /workspace, kept while the sandbox is stopped;
// - the pod: a non-root user, a read-only root file system (the work volume and a small /tmp are the
//   only writable places), no service account token, no service links, every capability dropped, no
//   privilege escalation, the runtime's default seccomp profile, and resource limits from the
//   `HANGAR_SANDBOX_*` settings.
// Stopping deletes the pod and keeps the claim; removing deletes all three.
//
// Files go through exec too (deepagents' file tools run `cat`, `find`… in the pod), so they work on
// the pod's file system. A command's standard input is sent on the exec stream and closed with the
// v5.channel.k8s.io close signal; an API server that only speaks older versions (before Kubernetes
// 1.30) gets small inputs embedded in the command instead.
import { CappedOutput } from '../output.js';
import { randomUUID } from 'node:crypto';
import { PassThrough, Writable } from 'node:stream';
import type * as k8s from '@kubernetes/client-node';
import { apiErrorMessage } from '../../deploy/kubernetes/index.js';
import { loadKubeConnection, type KubeConnection } from '../../deploy/kubernetes/kubeconfig.js';
import type { DiskUsage, ExecRequest, ExecResult, SandboxDriver, SandboxLimits, SandboxRef } from '../driver.js';

/** Where the work volume is mounted in the pod (and where commands start). */
export const WORKSPACE = '/workspace';

/** The container that runs a sandbox's commands. */
export const CONTAINER = 'sandbox';

/** Labels every sandbox object carries; `list` finds them by the first two. */
export const SANDBOX_LABELS = { managedBy: 'app.kubernetes.io/managed-by', component: 'hangar.dev/component', id: 'hangar.dev/sandbox-id' } as const;
const SELECTOR = `${SANDBOX_LABELS.managedBy}=hangar,${SANDBOX_LABELS.component}=sandbox`;

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const FIELD_MANAGER = 'hangar';
/** Largest standard input embedded in a command when the API server cannot close stdin (v4 and older). */
const MAX_EMBEDDED_STDIN = 48 * 1024;

/** Settings of the Kubernetes sandbox driver. */
export interface KubernetesSandboxOptions {
  kubeconfig?: string | undefined;
  namespace: string;
  image: string;
  /** CPU limit of a sandbox pod, a Kubernetes quantity ("1", "500m"). */
  cpu: string;
  /** Size of a sandbox's work volume, a Kubernetes quantity ("1Gi"). */
  volumeSize: string;
  storageClass?: string | undefined;
  /** The (non-root) user and group commands run as. */
  runAsUser: number;
  /** How long a new pod has to be Running. */
  startTimeoutMs: number;
  /** How long `du` may take in the pod to measure the work volume (default 10 s). */
  diskUsageTimeoutMs?: number | undefined;
  limits: SandboxLimits;
  /** Time between two reads of a starting pod. */
  pollMs?: number | undefined;
}

type Obj = k8s.KubernetesObject & { metadata: { name: string; namespace: string; labels: Record<string, string> } } & Record<string, unknown>;

/** The name of sandbox `id`'s pod, claim and network policy. */
export function sandboxObjectName(id: string): string {
  if (!ID.test(id)) throw new Error(`not a sandbox id: ${id}`);
  return `hangar-sandbox-${id}`;
}

/**
 * The objects of a sandbox, in the order they are applied: the network policy and the claim before
 * the pod (so the pod never runs without its network rule).
 */
export function renderSandbox(ref: SandboxRef, o: KubernetesSandboxOptions): Obj[] {
  const name = sandboxObjectName(ref.id);
  const labels = { [SANDBOX_LABELS.managedBy]: 'hangar', [SANDBOX_LABELS.component]: 'sandbox', [SANDBOX_LABELS.id]: ref.id };
  const metadata = { name, namespace: o.namespace, labels };
  const MiB = 1024 * 1024;
  const memory = `${Math.ceil(o.limits.memoryBytes / MiB)}Mi`;
  const tmp = `${Math.ceil(o.limits.tmpBytes / MiB)}Mi`;
  const networkPolicy: Obj = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata,
    spec: {
      podSelector: { matchLabels: { [SANDBOX_LABELS.id]: ref.id } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      // No egress rule: nothing is allowed out. `allow-network` lets the pod reach public addresses
      // and the cluster's DNS, never private ranges (Hangar, its database, other pods, the node's
      // metadata service).
      egress: ref.allowNetwork
        ? [
            { to: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16', '127.0.0.0/8'] } }, { ipBlock: { cidr: '::/0', except: ['fc00::/7', 'fe80::/10', '::1/128'] } }] },
            {
              to: [{ namespaceSelector: {}, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
              ports: [{ protocol: 'UDP', port: 53 }, { protocol: 'TCP', port: 53 }],
            },
          ]
        : [],
    },
  };
  const claim: Obj = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata,
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: o.volumeSize } },
      ...(o.storageClass ? { storageClassName: o.storageClass } : {}),
    },
  };
  const pod: Obj = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata,
    spec: {
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      hostNetwork: false,
      hostPID: false,
      hostIPC: false,
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 1,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: o.runAsUser,
        runAsGroup: o.runAsUser,
        fsGroup: o.runAsUser,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: CONTAINER,
          image: o.image,
          // Nothing runs but the commands sent through exec: the pod's main process only waits.
          command: ['/bin/sh', '-c', 'trap "exit 0" TERM INT; while true; do sleep 3600 & wait $!; done'],
          workingDir: WORKSPACE,
          env: [
            { name: 'HOME', value: WORKSPACE },
            { name: 'TMPDIR', value: '/tmp' },
            { name: 'LANG', value: 'C.UTF-8' },
          ],
          securityContext: {
            runAsNonRoot: true,
            allowPrivilegeEscalation: false,
            privileged: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
          },
          resources: {
            limits: { cpu: o.cpu, memory, 'ephemeral-storage': tmp },
            requests: { cpu: '50m', memory: '64Mi' },
          },
          volumeMounts: [
            { name: 'work', mountPath: WORKSPACE },
            { name: 'tmp', mountPath: '/tmp' },
          ],
        },
      ],
      volumes: [
        { name: 'work', persistentVolumeClaim: { claimName: name } },
        { name: 'tmp', emptyDir: { sizeLimit: tmp } },
      ],
    },
  };
  return [networkPolicy, claim, pod];
}

/** The status Kubernetes sends on the exec error channel: `Success`, or a failure with the exit code. */
interface ExecStatus {
  status?: string;
  reason?: string;
  message?: string;
  details?: { causes?: { reason?: string; message?: string }[] };
}

/** A pod's readiness, as far as running commands goes. */
type PodState = { ready: true } | { ready: false; failed?: string; deleting?: boolean };

function podState(pod: k8s.V1Pod): PodState {
  if (pod.metadata?.deletionTimestamp) return { ready: false, deleting: true };
  const phase = pod.status?.phase;
  if (phase === 'Failed' || phase === 'Succeeded') return { ready: false, failed: `the sandbox pod ended (${phase}${pod.status?.message ? `: ${pod.status.message}` : ''})` };
  for (const c of pod.status?.containerStatuses ?? []) {
    const waiting = c.state?.waiting;
    if (waiting && ['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'CreateContainerConfigError', 'CreateContainerError'].includes(waiting.reason ?? '')) {
      return { ready: false, failed: `the sandbox pod cannot start: ${waiting.reason}${waiting.message ? `: ${waiting.message}` : ''}` };
    }
  }
  const running = phase === 'Running' && (pod.status?.containerStatuses ?? []).some((c) => c.name === CONTAINER && c.state?.running);
  return running ? { ready: true } : { ready: false };
}

const isNotFound = (error: unknown) => (error as { code?: unknown })?.code === 404;

/** Runs sandboxes as pods of a Kubernetes cluster. */
export class KubernetesSandboxDriver implements SandboxDriver {
  readonly name = 'kubernetes' as const;
  private conn: Promise<KubeConnection & { objects: k8s.KubernetesObjectApi }> | undefined;
  /** Sandboxes whose pod this process has seen running (so a command does not read the pod first). */
  private readonly started = new Map<string, Promise<void>>();
  /** Commands in progress, per sandbox, to stop when it is removed. */
  private readonly running = new Map<string, Set<() => void>>();
  /** The exec subprotocol the API server chose last (v5 can close stdin; older ones cannot). */
  private protocol: string | undefined;

  constructor(private readonly o: KubernetesSandboxOptions) {}

  private api() {
    this.conn ??= loadKubeConnection(this.o.kubeconfig).then((c) => ({ ...c, objects: c.lib.KubernetesObjectApi.makeApiClient(c.kc) }));
    this.conn.catch(() => {
      this.conn = undefined;
    });
    return this.conn;
  }

  async unavailable(): Promise<string | null> {
    try {
      await this.api();
      return null;
    } catch (error) {
      return `the kubernetes sandbox driver cannot reach a cluster: ${(error as Error).message}`;
    }
  }

  ensure(ref: SandboxRef): Promise<void> {
    let p = this.started.get(ref.id);
    if (!p) {
      p = this.start(ref);
      this.started.set(ref.id, p);
      p.catch(() => this.started.delete(ref.id));
    }
    return p;
  }

  private async readPod(id: string): Promise<k8s.V1Pod | null> {
    const { objects } = await this.api();
    try {
      return (await objects.read({ apiVersion: 'v1', kind: 'Pod', metadata: { name: sandboxObjectName(id), namespace: this.o.namespace } })) as k8s.V1Pod;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw new Error(`reading the sandbox pod failed: ${apiErrorMessage(error)}`);
    }
  }

  /** Apply the sandbox's objects when its pod is missing, then wait until the pod runs. */
  private async start(ref: SandboxRef): Promise<void> {
    const { objects } = await this.api();
    const deadline = Date.now() + this.o.startTimeoutMs;
    const pause = () => new Promise((r) => setTimeout(r, this.o.pollMs ?? 250));
    let pod = await this.readPod(ref.id);
    // A pod still terminating (stopped a moment ago) must be gone before its successor is made.
    while (pod && podState(pod).ready === false && (podState(pod) as { deleting?: boolean }).deleting) {
      if (Date.now() > deadline) throw new Error('the previous sandbox pod is still terminating');
      await pause();
      pod = await this.readPod(ref.id);
    }
    if (!pod) {
      for (const obj of renderSandbox(ref, this.o)) {
        try {
          await objects.patch(obj, undefined, undefined, FIELD_MANAGER, true, 'application/apply-patch+yaml');
        } catch (error) {
          throw new Error(`applying the sandbox's ${obj.kind} failed: ${apiErrorMessage(error)}`);
        }
      }
    }
    for (;;) {
      pod = await this.readPod(ref.id);
      if (!pod) throw new Error('the sandbox pod disappeared while starting');
      const state = podState(pod);
      if (state.ready) break;
      if (state.failed) {
        // Deleted, so that the next command makes a fresh pod (with the image as the settings say then).
        await this.deleteObjects(ref.id, [{ apiVersion: 'v1', kind: 'Pod' }]).catch(() => {});
        throw new Error(state.failed);
      }
      if (Date.now() > deadline) throw new Error(`the sandbox pod was not running within ${Math.round(this.o.startTimeoutMs / 1000)} s (phase ${pod.status?.phase ?? 'unknown'})`);
      await pause();
    }
  }

  async exec(ref: SandboxRef, request: ExecRequest): Promise<ExecResult> {
    await this.ensure(ref);
    const first = await this.execOnce(ref, request);
    if (first !== 'gone') return first;
    // The pod went away under us (deleted by someone, evicted): start it again, once.
    this.started.delete(ref.id);
    await this.ensure(ref);
    const second = await this.execOnce(ref, request);
    if (second === 'gone') throw new Error('the sandbox pod cannot be reached');
    return second;
  }

  /**
   * The shell script a command runs in: limits, the work directory, merged output, a timeout in the
   * pod. It writes its process id to `pidFile` first and then becomes the command (exec), so that
   * Hangar can kill the command and everything it started when it stops it (see `killInPod`).
   */
  private wrapper(request: ExecRequest, embeddedStdin: string | null, pidFile: string): string {
    const l = this.o.limits;
    // The pod's own `timeout` is a backstop: Hangar closes the stream at the limit and kills the
    // command through a second exec, but if that cannot reach the pod the command still ends.
    // Without --foreground, timeout leads its own process group, which -s KILL reaches whole.
    const podTimeout = Math.ceil(l.timeoutMs / 1000) + 5;
    return [
      `cd ${WORKSPACE} 2>/dev/null`,
      // Process-id files of commands that ended on their own (older than any command can run).
      `find /tmp -maxdepth 1 -name '.hangar-*.pid' -mmin +${Math.ceil(podTimeout / 60) + 1} -exec rm -f {} + 2>/dev/null`,
      `echo $$ > ${pidFile} 2>/dev/null`,
      'ulimit -c 0 2>/dev/null',
      `ulimit -t ${l.cpuSeconds} 2>/dev/null`,
      // POSIX ulimit -f counts 512-byte blocks.
      `ulimit -f ${Math.max(1, Math.floor(l.maxFileBytes / 512))} 2>/dev/null`,
      ...(request.mergeStderr === false ? [] : ['exec 2>&1']),
      ...(embeddedStdin !== null ? [`exec 0<<'HANGAR_STDIN_EOF'`, embeddedStdin, 'HANGAR_STDIN_EOF'] : []),
      `if command -v timeout >/dev/null 2>&1; then exec timeout -s KILL ${podTimeout} /bin/sh -c "$1"; fi`,
      'exec /bin/sh -c "$1"',
    ].join('\n');
  }

  /**
   * Kill a command Hangar stopped (timeout, output cap, cancelled run). Closing the exec stream is not
   * enough: a kubelet lets the command run on. Best effort; the in-pod timeout remains the backstop.
   */
  private async killInPod(ref: SandboxRef, pidFile: string): Promise<void> {
    // `kill -KILL -<pgid>`: the form dash, bash and busybox all take (dash refuses `--` there).
    const command = `p=$(cat ${pidFile} 2>/dev/null) && [ -n "$p" ] && { kill -KILL "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null; }; rm -f ${pidFile}`;
    await this.execOnce(ref, { command, mergeStderr: false }, false).catch(() => {});
  }

  private async execOnce(ref: SandboxRef, request: ExecRequest, killWhenStopped = true): Promise<ExecResult | 'gone'> {
    const { lib, kc } = await this.api();
    // Which exec protocol the server speaks decides how input is sent: learn it with a no-op first.
    if (request.stdin && !this.protocol) {
      const probe = await this.execOnce(ref, { command: 'true' });
      if (probe === 'gone') return 'gone';
    }
    const started = Date.now();
    const pidFile = `/tmp/.hangar-${randomUUID()}.pid`;
    const cap = request.maxOutputBytes ?? this.o.limits.maxOutputBytes;
    const errChunks: Buffer[] = [];
    let stoppedBy: ExecResult['stoppedBy'] = null;
    let status: ExecStatus | undefined;
    const conn: { socket?: { terminate(): void } } = {};
    const stop = (why: NonNullable<ExecResult['stoppedBy']>) => {
      stoppedBy ??= why;
      conn.socket?.terminate();
    };

    // Standard input: on the stream when the server can close it (v5), else embedded (small only).
    let command = request.command;
    let embedded: string | null = null;
    const stdinBytes = request.stdin ? Buffer.from(request.stdin) : undefined;
    let stdin: PassThrough | null = null;
    if (stdinBytes) {
      if (this.protocol && this.protocol !== 'v5.channel.k8s.io') {
        if (stdinBytes.length > MAX_EMBEDDED_STDIN) {
          return failure(`the API server speaks ${this.protocol}, which cannot close a command's input; inputs over ${MAX_EMBEDDED_STDIN} bytes need v5.channel.k8s.io (Kubernetes 1.30 or later)`, started);
        }
        embedded = stdinBytes.toString('base64').replace(/.{1,76}/g, '$&\n').trimEnd();
        command = `base64 -d | { ${command}\n}`;
      } else {
        stdin = new PassThrough();
      }
    }

    const out = new CappedOutput(cap, request.onOutput, () => stop('output_limit'));
    const take = out.take;
    const stdout = new Writable({
      write(chunk: Buffer, _enc, cb) {
        take(chunk);
        cb();
      },
    });
    const stderr = new Writable({
      write(chunk: Buffer, _enc, cb) {
        if (errChunks.reduce((n, c) => n + c.length, 0) < 4096) errChunks.push(chunk);
        cb();
      },
    });

    type Socket = import('ws').WebSocket;
    const opening = new lib.Exec(kc).exec(
      this.o.namespace,
      sandboxObjectName(ref.id),
      CONTAINER,
      ['/bin/sh', '-c', this.wrapper(request, embedded, pidFile), 'sandbox', command],
      stdout,
      stderr,
      stdin,
      false,
      (s) => {
        status = s as ExecStatus;
      },
    ) as unknown as Promise<Socket>;
    // The wall clock counts from here: an API server that never answers the upgrade is a timeout too.
    let openTimer: NodeJS.Timeout | undefined;
    const tooLong = new Promise<'timeout'>((resolve) => {
      openTimer = setTimeout(() => resolve('timeout'), this.o.limits.timeoutMs);
    });
    let ws: Socket;
    try {
      const first = await Promise.race([opening, tooLong]);
      if (first === 'timeout') {
        opening.then((late) => late.terminate(), () => {});
        return { output: Buffer.alloc(0), exitCode: null, signal: null, truncated: false, stoppedBy: 'timeout', durationMs: Date.now() - started };
      }
      ws = first;
    } catch (error) {
      // The upgrade is refused with 404 when the pod is gone.
      if (/\b404\b/.test(String((error as Error)?.message ?? error))) return 'gone';
      throw new Error(`the sandbox exec could not start: ${(error as Error)?.message ?? String(error)}`);
    } finally {
      clearTimeout(openTimer);
    }
    this.protocol = ws.protocol || this.protocol;
    conn.socket = ws;
    if (stoppedBy) ws.terminate(); // the cap was reached before the socket was handed over
    // (On v4 and older, ending the input makes the client close the whole stream: the protocol probe
    // at the top keeps that from happening to a command.)
    if (stdin && stdinBytes) stdin.end(stdinBytes);

    const timer = setTimeout(() => stop('timeout'), Math.max(0, this.o.limits.timeoutMs - (Date.now() - started)));
    const onAbort = () => stop('aborted');
    request.signal?.addEventListener('abort', onAbort, { once: true });
    if (request.signal?.aborted) stop('aborted'); // its run ended while the exec stream was opening
    const stopper = () => stop('aborted');
    if (!this.running.has(ref.id)) this.running.set(ref.id, new Set());
    this.running.get(ref.id)!.add(stopper);
    try {
      if (ws.readyState !== ws.CLOSED) await new Promise<void>((resolve) => ws.once('close', () => resolve()));
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
      this.running.get(ref.id)?.delete(stopper);
    }
    if (stoppedBy && killWhenStopped) await this.killInPod(ref, pidFile);

    const stderrText = Buffer.concat(errChunks);
    let exitCode: number | null = null;
    let note = '';
    if (stoppedBy) exitCode = null;
    else if (status?.status === 'Success') exitCode = 0;
    else if (status?.reason === 'NonZeroExitCode') {
      const code = Number.parseInt(status.details?.causes?.find((c) => c.reason === 'ExitCode')?.message ?? '', 10);
      exitCode = Number.isInteger(code) ? code : null;
      // `timeout -s KILL` (the pod's backstop) and the kernel's CPU limit end a command with 128 + signal.
    } else if (status) note = `\n[the sandbox could not run the command: ${status.message ?? status.reason ?? 'unknown error'}]`;
    else note = '\n[the connection to the sandbox closed before the command finished]';
    const parts = request.mergeStderr === false || stderrText.length === 0 ? out.chunks : [...out.chunks, stderrText];
    return {
      output: Buffer.concat(note ? [...parts, Buffer.from(note)] : parts),
      exitCode,
      signal: null,
      truncated: out.truncated,
      stoppedBy,
      durationMs: Date.now() - started,
    };
  }

  private async deleteObjects(id: string, kinds: { apiVersion: string; kind: string }[]): Promise<void> {
    const { objects } = await this.api();
    const name = sandboxObjectName(id);
    for (const k of kinds) {
      try {
        await objects.delete({ ...k, metadata: { name, namespace: this.o.namespace } }, undefined, undefined, k.kind === 'Pod' ? 0 : undefined);
      } catch (error) {
        if (!isNotFound(error)) throw new Error(`deleting the sandbox's ${k.kind} failed: ${apiErrorMessage(error)}`);
      }
    }
  }

  /** Delete the pod; the work volume (and the network policy) stay for the next start. */
  async stop(id: string): Promise<void> {
    this.started.delete(id);
    await this.deleteObjects(id, [{ apiVersion: 'v1', kind: 'Pod' }]);
  }

  /** Delete the pod, its work volume and its network policy. */
  async remove(id: string): Promise<void> {
    for (const kill of this.running.get(id) ?? []) kill();
    this.started.delete(id);
    await this.deleteObjects(id, [
      { apiVersion: 'v1', kind: 'Pod' },
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim' },
      { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy' },
    ]);
  }

  /** The work volume's use, measured in the pod (`du`); null while the pod is not running here. */
  async diskUsage(id: string): Promise<DiskUsage> {
    if (!this.started.has(id)) return null;
    try {
      // Bounded as on the local driver: `timeout` ends a du that takes too long (exit 137, KILL).
      const seconds = Math.max(1, Math.ceil((this.o.diskUsageTimeoutMs ?? 10_000) / 1000));
      const command = `v=$(timeout -s KILL ${seconds} du -sk ${WORKSPACE} 2>/dev/null); [ $? -eq 137 ] && exit 137; echo "$v" | cut -f1`;
      const r = await this.execOnce({ id, slot: 0 }, { command, mergeStderr: false });
      if (r === 'gone') return null;
      if (r.exitCode === 137) return 'timed_out';
      const kib = Number.parseInt(r.output.toString('utf8'), 10);
      return Number.isFinite(kib) ? kib * 1024 : null;
    } catch {
      return null;
    }
  }

  /** Ids of every sandbox with a pod, a claim or a network policy in the namespace. */
  async list(): Promise<string[]> {
    const { objects } = await this.api();
    const ids = new Set<string>();
    for (const [apiVersion, kind] of [
      ['v1', 'Pod'],
      ['v1', 'PersistentVolumeClaim'],
      ['networking.k8s.io/v1', 'NetworkPolicy'],
    ] as const) {
      let res: k8s.KubernetesListObject<k8s.KubernetesObject>;
      try {
        res = await objects.list(apiVersion, kind, this.o.namespace, undefined, undefined, undefined, undefined, SELECTOR);
      } catch (error) {
        throw new Error(`listing sandbox ${kind}s failed: ${apiErrorMessage(error)}`);
      }
      for (const item of res.items) {
        const id = item.metadata?.labels?.[SANDBOX_LABELS.id];
        if (id && ID.test(id)) ids.add(id);
      }
    }
    return [...ids];
  }
}

function failure(message: string, started: number): ExecResult {
  return { output: Buffer.from(`[${message}]`), exitCode: null, signal: null, truncated: false, stoppedBy: null, durationMs: Date.now() - started };
}
