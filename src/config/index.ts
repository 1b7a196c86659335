// Server configuration: one table of settings, parsed once (flags > environment > defaults) and frozen.
import path from 'node:path';
import { z } from 'zod';
import { SOURCES } from '../core/deployments/types.js';
import { EgressGuard } from '../net/egress.js';

/** One setting: where it comes from, how it is checked, and what it means (shown in `hangar serve --help`). */
interface Setting<S extends z.ZodType> {
  env: string;
  flag?: string;
  schema: S;
  description: string;
}

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
// A Node.js timer cannot wait longer than 2^31 - 1 ms: a longer one fires after 1 ms, so a "very long"
// time setting would end every run, command or wait at once. One rule for every setting in
// milliseconds (`*_MS`) or seconds (`*_SECONDS`), applied by `withLimits` below: such a value
// is refused at start beyond what a timer can wait.
export const MAX_TIMER_MS = 2 ** 31 - 1;
const TIMER_LIMIT = 'about 24 days: the longest a Node.js timer can wait';
// Retention settings go to SQL (`now() - make_interval(…)`), not to a timer: past PostgreSQL's
// ranges a sweep fails every hour (logged) instead of the server refusing the value at start. A
// century is longer than anyone keeps run events, traces or uploads on purpose.
export const MAX_RETENTION_DAYS = 36_500;
const RETENTION_LIMIT = 'a century: keep longer by keeping a backup';
const LIMITS: { suffix: string; max: number; unit: string; why: string }[] = [
  { suffix: '_MS', max: MAX_TIMER_MS, unit: 'ms', why: TIMER_LIMIT },
  { suffix: '_SECONDS', max: Math.floor(MAX_TIMER_MS / 1000), unit: 'seconds', why: TIMER_LIMIT },
  { suffix: '_RETENTION_DAYS', max: MAX_RETENTION_DAYS, unit: 'days', why: RETENTION_LIMIT },
  { suffix: '_RETENTION_HOURS', max: MAX_RETENTION_DAYS * 24, unit: 'hours', why: RETENTION_LIMIT },
];
const bool = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0', 'yes', 'no'])], { error: 'must be true or false (or 1/0, yes/no)' })
  .transform((v) => v === true || v === 'true' || v === '1' || v === 'yes');

/** Every setting of the server. Adding one here adds it to parsing, `--help` and the README table. */
export const settings = withLimits({
  port: {
    env: 'PORT',
    flag: 'port',
    schema: port.default(8124),
    description: 'HTTP port to listen on (0 picks a free port).',
  },
  host: {
    env: 'HOST',
    flag: 'host',
    schema: z.string().min(1).default('127.0.0.1'),
    description: 'Interface to bind; use 0.0.0.0 to accept connections from other hosts.',
  },
  dataDir: {
    env: 'HANGAR_DATA_DIR',
    flag: 'data-dir',
    schema: z.string().min(1).default('.hangar'),
    description: "Data directory: embedded PostgreSQL files, the generated secret key file. Created at start-up; a path that cannot be created or written there (under `/proc`, a file in the way, no permission) stops the start, exit 2, naming the setting. As root, the embedded PostgreSQL runs as the `postgres` user, which must be able to enter every folder above it (a data directory inside a folder only root enters is refused the same way, naming the folder). A refused start removes the folders it created and changes no folder's permissions.",
  },
  databaseUrl: {
    env: 'DATABASE_URL',
    flag: 'database-url',
    schema: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .optional(),
    description: 'PostgreSQL 14+ to use instead of the embedded database (required for several replicas).',
  },
  secretKey: {
    env: 'HANGAR_SECRET_KEY',
    schema: z
      .string()
      .regex(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)$/, 'must be 32 bytes as 64 hex characters or base64')
      .optional(),
    description:
      'Key that encrypts secrets at rest (AES-256-GCM). Default: a key file generated in the data directory. Replicas must share it.',
  },
  bootstrapApiKey: {
    env: 'HANGAR_BOOTSTRAP_API_KEY',
    schema: z.string().min(16, 'must be at least 16 characters').optional(),
    description: 'Make this exact key an admin key of the default workspace (for scripts and CI).',
  },
  bodyLimitBytes: {
    env: 'HANGAR_BODY_LIMIT_BYTES',
    schema: positiveInt.default(8 * 1024 * 1024),
    description: 'Largest accepted request body in bytes; larger bodies get 413.',
  },
  logLevel: {
    env: 'LOG_LEVEL',
    flag: 'log-level',
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    description: 'Log level (JSON logs on standard output).',
  },
  role: {
    env: 'HANGAR_ROLE',
    flag: 'role',
    schema: z.enum(['all', 'api', 'worker']).default('all'),
    description: 'What this process runs: `api` serves the API and runs nothing; `worker` executes runs and the background work (deployments, schedules, webhooks, sweepers), and still answers the API, `/ok`, `/ready` and `/metrics` on its port (probes, joins); `all` both.',
  },
  publicUrl: {
    env: 'HANGAR_PUBLIC_URL',
    schema: z.url({ protocol: /^https?$/ }).optional(),
    description: 'URL at which clients reach this server (OAuth callbacks, links); defaults to the listen address.',
  },
  workerConcurrency: {
    env: 'HANGAR_WORKER_CONCURRENCY',
    flag: 'worker-concurrency',
    schema: positiveInt.default(32),
    description: 'Runs executed at once by this process.',
  },
  executor: {
    env: 'HANGAR_EXECUTOR',
    flag: 'executor',
    schema: z.enum(['inline', 'thread']).default('inline'),
    description:
      'Where this process executes runs: `inline` on the event loop that serves HTTP, or `thread` on a worker thread of its own (with the deployment reconciler, scheduler and sweepers), so requests and streams keep their event loop under load and the process can use a second core. Ignored with role api.',
  },
  idleGcMb: {
    env: 'HANGAR_IDLE_GC_MB',
    schema: z.coerce.number().int().min(0).default(64),
    description:
      'When a thread of the server has been idle for 2 s and its heap uses or reserves this many MB more than after its last collection, it runs a full garbage collection, and again at the next idle check while one still gives back reserved heap, so that the memory of a burst goes back to the system instead of staying at its peak (0 turns it off).',
  },
  streamCapacity: {
    env: 'HANGAR_STREAM_CAPACITY',
    schema: positiveInt.default(10_000),
    description:
      'Run streams (SSE) this process serves at once, independent of the worker concurrency: a run beyond the workers waits in the queue with its stream open. A stream beyond this is refused with 503 `stream_capacity_reached` (before any run starts).',
  },
  temporaryThreadGraceSeconds: {
    env: 'HANGAR_TEMPORARY_THREAD_GRACE_SECONDS',
    schema: z.coerce.number().int().min(0).default(60),
    description:
      'A thread made for a stateless run (LangGraph `POST /runs/stream`, `/runs/wait`, `/runs` without a thread; `on_completion: "delete"`, the default) is deleted when the request that followed its run has seen it end; one nobody followed (a background run, a client gone, a process that crashed) is deleted by a sweeper (at start and every minute) once its run has been over this many seconds.',
  },
  runEventRetentionDays: {
    env: 'HANGAR_RUN_EVENT_RETENTION_DAYS',
    schema: positiveInt.default(30),
    description: 'Events of ended runs older than this many days are deleted by a sweeper (at start and hourly); the runs themselves stay.',
  },
  runLeaseMs: {
    env: 'HANGAR_RUN_LEASE_MS',
    schema: positiveInt.min(1000).default(30_000),
    description: 'Lease of a worker on a run; renewed every third of it while the run executes.',
  },
  runPollMs: {
    env: 'HANGAR_RUN_POLL_MS',
    schema: positiveInt.default(2_000),
    description: 'How often idle workers look for pending runs that no notification announced (a safety net: starts, hand-backs and sweeps announce their runs to every process at once).',
  },
  runMaxAttempts: {
    env: 'HANGAR_RUN_MAX_ATTEMPTS',
    schema: positiveInt.max(100).default(3),
    description:
      'Attempts of a run whose worker died (its lease expired): it is retried from its last checkpoint until it has used this many, then failed.',
  },
  modelTimeoutMs: {
    env: 'HANGAR_MODEL_TIMEOUT_MS',
    schema: positiveInt.default(60_000),
    description: 'Timeout of one attempt of a model provider request (the provider client\'s own clock); see HANGAR_MODEL_CALL_TIMEOUT_MS for the whole call.',
  },
  modelCallTimeoutMs: {
    env: 'HANGAR_MODEL_CALL_TIMEOUT_MS',
    schema: positiveInt.default(120_000),
    description: 'Longest one model call may take, every retry included (enforced by Hangar); the run then fails with error code model_timeout.',
  },
  modelIdleTimeoutMs: {
    env: 'HANGAR_MODEL_IDLE_TIMEOUT_MS',
    schema: positiveInt.default(60_000),
    description: 'Longest a streaming model call may go without sending a chunk once it started streaming (enforced by Hangar); the run then fails with error code model_timeout.',
  },
  runTimeoutMs: {
    env: 'HANGAR_RUN_TIMEOUT_MS',
    schema: positiveInt.default(1_800_000),
    description: 'Longest a run may take (an agent may set its own with runtime.run_timeout_seconds in agent.json); the run then ends with status timeout and error code run_timeout.',
  },
  modelMaxRetries: {
    env: 'HANGAR_MODEL_MAX_RETRIES',
    schema: z.coerce.number().int().min(0).max(10).default(2),
    description: 'Retries of a failed model provider request before the run fails.',
  },
  toolTimeoutMs: {
    env: 'HANGAR_TOOL_TIMEOUT_MS',
    schema: positiveInt.default(60_000),
    description: 'Timeout of one tool call to a tool server; a timed-out call is an error the model sees.',
  },
  toolConnectTimeoutMs: {
    env: 'HANGAR_TOOL_CONNECT_TIMEOUT_MS',
    schema: positiveInt.default(10_000),
    description: 'How long to wait for a tool server to list its tools before treating it as unreachable.',
  },
  checkpointDurability: {
    env: 'HANGAR_CHECKPOINT_DURABILITY',
    schema: z.enum(['async', 'sync', 'exit']).default('exit'),
    description:
      'When LangGraph checkpoints a run: only when it ends or pauses for a person (exit, default: a run is the unit of retry, and per-step checkpoints cost about half of a short run), after every step written while the next runs (async), or before the next step (sync).',
  },
  corsOrigins: {
    env: 'HANGAR_CORS_ORIGINS',
    schema: z
      .string()
      .default('')
      .transform((v) => v.split(',').map((o) => o.trim()).filter((o) => o !== ''))
      .pipe(z.array(z.string().refine(isOrigin, 'each entry must be an origin such as https://chat.example.com (scheme, host, optional port; no path) or *'))),
    description:
      'Comma-separated browser origins allowed to call the API from web pages they serve (`*`: any). None by default: browsers on other origins are refused.',
  },
  heartbeatMs: {
    env: 'HANGAR_HEARTBEAT_MS',
    schema: positiveInt.default(5_000),
    description: 'Interval of `: heartbeat` comments on an idle run stream.',
  },
  recursionLimit: {
    env: 'HANGAR_RECURSION_LIMIT',
    schema: positiveInt.default(1_000),
    description: 'Most graph steps one run may take (a LangGraph client’s `config.recursion_limit` can only lower it).',
  },
  drainTimeoutMs: {
    env: 'HANGAR_DRAIN_TIMEOUT_MS',
    schema: positiveInt.default(10_000),
    description: 'On SIGINT/SIGTERM, how long to wait for requests and runs to finish before stopping; runs still going are then handed back to the queue for another worker (or the next start). A second signal stops waiting at once.',
  },
  tracing: {
    env: 'HANGAR_TRACING',
    flag: 'tracing',
    schema: bool.default(true),
    description: 'Trace every agent run into the trace store (and the configured exporters). `false` turns run tracing off.',
  },
  deployDrivers: {
    env: 'HANGAR_DEPLOY_DRIVERS',
    schema: z
      .string()
      .regex(/^(\s*[a-z_]+=(local|kubernetes)\s*)(,\s*[a-z_]+=(local|kubernetes)\s*)*$/, 'must be a list like vcshost=local,external_docker=kubernetes')
      .superRefine(checkDriverSources)
      .default('vcshost=local,internal_source=local,internal_template=local'),
    description:
      'Which deployment driver serves which source: comma-separated source=driver (drivers: local, kubernetes). A source not listed is refused at create.',
  },
  deployK8sNamespaces: {
    env: 'HANGAR_DEPLOY_K8S_NAMESPACES',
    schema: z
      .string()
      .regex(/^\s*([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\s*(,\s*[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\s*)*)?$/, 'must be a comma-separated list of Kubernetes namespace names')
      .optional(),
    description:
      'Comma-separated Kubernetes namespaces kubernetes-driven deployments may use (`source_config.listener_config.k8s_namespace`, default `default`); another is refused with 422. Empty: any namespace Hangar’s own account may write to.',
  },
  deployK8sPodPolicy: {
    env: 'HANGAR_DEPLOY_K8S_POD_POLICY',
    schema: z.enum(['open', 'restricted']).default('open'),
    description:
      'How much of the pod a kubernetes-driven deployment may shape. `open`: as given. `restricted`: refuses (422) `service_account_name`, volumes other than emptyDir, configMap and downwardAPI, and init containers or sidecars with privileged, allowPrivilegeEscalation, added capabilities or runAsUser 0; and runs the application containers as HANGAR_DEPLOY_K8S_RUN_AS_USER, non-root, without privilege escalation or capabilities, under the RuntimeDefault seccomp profile.',
  },
  deployK8sRunAsUser: {
    env: 'HANGAR_DEPLOY_K8S_RUN_AS_USER',
    schema: z.coerce.number().int().min(1).max(2 ** 31 - 1).default(1000),
    description: 'User and group (non-root) the application containers of kubernetes-driven deployments run as under HANGAR_DEPLOY_K8S_POD_POLICY=restricted (1000 is `node` in Node.js images).',
  },
  deployPollMs: {
    env: 'HANGAR_DEPLOY_POLL_MS',
    schema: positiveInt.default(2_000),
    description: 'How often the deployment reconciler looks for work made by other processes (its own changes wake it at once).',
  },
  deployLeaseMs: {
    env: 'HANGAR_DEPLOY_LEASE_MS',
    schema: positiveInt.default(30_000),
    description: 'Lease of a reconciler on a revision (renewed while it works); another process takes the revision over when it expires.',
  },
  deployBuildTimeoutMs: {
    env: 'HANGAR_DEPLOY_BUILD_TIMEOUT_MS',
    schema: positiveInt.default(600_000),
    description: 'Time limit of fetching, installing and building one revision (local driver).',
  },
  deploySeccomp: {
    env: 'HANGAR_DEPLOY_SECCOMP',
    schema: bool.default(true),
    description: 'Run confined builds and applications of local deployments under the seccomp filter of local sandboxes (see HANGAR_SANDBOX_SECCOMP). Where the kernel refuses it, the log says so and they run without it.',
  },
  deployUploadRetentionHours: {
    env: 'HANGAR_DEPLOY_UPLOAD_RETENTION_HOURS',
    schema: positiveInt.default(24),
    description: 'Uploaded source tarballs (internal_source) that no revision refers to are deleted by a sweeper (at start and hourly) once they are older than this many hours; deleting a deployment releases its uploads.',
  },
  deployHealthTimeoutMs: {
    env: 'HANGAR_DEPLOY_HEALTH_TIMEOUT_MS',
    schema: positiveInt.default(120_000),
    description: 'How long a new revision has to answer its health check (local driver) or have its API Deployment available (kubernetes driver) before it is DEPLOY_FAILED.',
  },
  deployAllowLocalRepos: {
    env: 'HANGAR_DEPLOY_ALLOW_LOCAL_REPOS',
    schema: bool.default(false),
    description: 'Let git integrations and vcshost deployments read repositories on this host (file://), only under HANGAR_LOCAL_REPO_ROOTS (development and tests).',
  },
  localRepoRoots: {
    env: 'HANGAR_LOCAL_REPO_ROOTS',
    schema: z.string().optional(),
    description:
      'Comma-separated directories under which local repositories (git integrations, file:// deployments) may live; only with HANGAR_DEPLOY_ALLOW_LOCAL_REPOS=true. Empty: none.',
  },
  egressAllow: {
    env: 'HANGAR_EGRESS_ALLOW',
    schema: z
      .string()
      .refine((v) => EgressGuard.validate(v) === undefined, { error: (issue) => EgressGuard.validate(String(issue.input)) ?? 'invalid' })
      .optional(),
    description:
      'Private destinations Hangar may call for user-supplied URLs (tool servers, OAuth, model base URLs, code hosts): comma-separated loopback, private, CIDR ranges, host names (.suffix for sub-domains), or none. Unset: allowed only when HOST is a loopback address. Link-local and cloud metadata addresses are always refused.',
  },
  authFailureLimit: {
    env: 'HANGAR_AUTH_FAILURE_LIMIT',
    schema: z.coerce.number().int().min(0).default(20),
    description: 'Failed authentications one client address may make per HANGAR_AUTH_FAILURE_WINDOW_SECONDS before getting 429 with Retry-After (0: no limit).',
  },
  authFailureWindowSeconds: {
    env: 'HANGAR_AUTH_FAILURE_WINDOW_SECONDS',
    schema: positiveInt.default(60),
    description: 'Window of HANGAR_AUTH_FAILURE_LIMIT; a throttled address waits until its window ends.',
  },
  keyRateLimit: {
    env: 'HANGAR_KEY_RATE_LIMIT',
    schema: z.coerce.number().int().min(0).default(0),
    description: 'Requests per second one API key may make (0: no limit); beyond it, 429 with Retry-After.',
  },
  kubeconfig: {
    env: 'HANGAR_KUBECONFIG',
    schema: z.string().optional(),
    description: 'Kubeconfig file of the cluster the kubernetes driver applies to (default: in-cluster service account, then ~/.kube/config).',
  },
  traceRetentionDays: {
    env: 'HANGAR_TRACE_RETENTION_DAYS',
    flag: 'trace-retention-days',
    schema: positiveInt.default(30),
    description: 'Traced runs older than this many days are deleted by a sweeper (at start and hourly).',
  },
  otlpTracesEndpoint: {
    env: 'HANGAR_OTLP_TRACES_ENDPOINT',
    schema: z.url({ protocol: /^https?$/ }).optional(),
    description: 'Also export every trace as OpenTelemetry spans (GenAI conventions) over OTLP/HTTP to this URL, e.g. http://collector:4318/v1/traces.',
  },
  otlpHeaders: {
    env: 'HANGAR_OTLP_HEADERS',
    schema: z
      .string()
      .regex(/^([^=,]+=[^,]*)(,[^=,]+=[^,]*)*$/, 'must be key=value pairs separated by commas')
      // Values are percent-decoded (OTEL_EXPORTER_OTLP_HEADERS form); the message names the header, never its value.
      .superRefine((text, ctx) => {
        for (const pair of text.split(',')) {
          const eq = pair.indexOf('=');
          if (eq < 0) continue; // reported by the pattern above
          try {
            decodeURIComponent(pair.slice(eq + 1));
          } catch {
            ctx.addIssue({ code: 'custom', message: `the value of header "${pair.slice(0, eq).trim()}" is not valid percent-encoding (write a literal % as %25)` });
          }
        }
      })
      .optional(),
    description: 'Headers sent with OTLP exports, as key=value,key2=value2, values percent-encoded (for example a collector API key).',
  },
  langsmithExportUrl: {
    env: 'HANGAR_LANGSMITH_EXPORT_URL',
    schema: z.url({ protocol: /^https?$/ }).optional(),
    description: 'Also forward every trace to this LangSmith-compatible API (its base URL, as LANGSMITH_ENDPOINT).',
  },
  langsmithExportApiKey: {
    env: 'HANGAR_LANGSMITH_EXPORT_API_KEY',
    schema: z.string().min(1).optional(),
    description: 'API key sent (X-Api-Key) to the LangSmith-compatible export destination.',
  },
  traceExportQueue: {
    env: 'HANGAR_TRACE_EXPORT_QUEUE',
    schema: positiveInt.default(10_000),
    description: 'Most run reports each exporter holds while its destination is slow; more are dropped and counted.',
  },
  sandboxDriver: {
    env: 'HANGAR_SANDBOX_DRIVER',
    schema: z.enum(['local', 'kubernetes']).default('local'),
    description: 'Where agents with a sandbox backend run commands: local (bubblewrap namespaces on this host) or kubernetes (one pod per sandbox in the cluster of `HANGAR_KUBECONFIG`). See [docs/sandboxes.md](docs/sandboxes.md).',
  },
  sandboxK8sNamespace: {
    env: 'HANGAR_SANDBOX_K8S_NAMESPACE',
    schema: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a Kubernetes namespace name').max(63).default('default'),
    description: 'Namespace of the kubernetes sandbox driver’s pods, volumes and network policies (one Hangar per namespace: orphans are found by label in it).',
  },
  sandboxK8sImage: {
    env: 'HANGAR_SANDBOX_K8S_IMAGE',
    schema: z.string().min(1).default('python:3.12-slim'),
    description: 'Container image of sandbox pods (kubernetes driver); it needs `/bin/sh`, and coreutils’ `timeout` for the in-pod backstop of the command timeout.',
  },
  sandboxK8sCpu: {
    env: 'HANGAR_SANDBOX_K8S_CPU',
    schema: z.string().regex(/^\d+(\.\d+)?m?$/, 'must be a Kubernetes CPU quantity such as 1, 0.5 or 500m').default('1'),
    description: 'CPU limit of a sandbox pod (kubernetes driver), a Kubernetes quantity.',
  },
  sandboxK8sVolumeSize: {
    env: 'HANGAR_SANDBOX_K8S_VOLUME_SIZE',
    schema: z.string().regex(/^\d+(Ki|Mi|Gi|Ti)$/, 'must be a Kubernetes storage quantity such as 1Gi or 500Mi').default('1Gi'),
    description: 'Size of a sandbox’s work volume (kubernetes driver: its PersistentVolumeClaim).',
  },
  sandboxK8sStorageClass: {
    env: 'HANGAR_SANDBOX_K8S_STORAGE_CLASS',
    schema: z.string().min(1).optional(),
    description: 'Storage class of sandbox work volumes (kubernetes driver). Default: the cluster’s default class.',
  },
  sandboxK8sRunAsUser: {
    env: 'HANGAR_SANDBOX_K8S_RUN_AS_USER',
    schema: z.coerce.number().int().min(1).max(2 ** 31 - 1).default(1000),
    description: 'User and group (non-root) the commands of a sandbox pod run as (kubernetes driver).',
  },
  sandboxK8sStartTimeoutSeconds: {
    env: 'HANGAR_SANDBOX_K8S_START_TIMEOUT_SECONDS',
    schema: positiveInt.default(180),
    description: 'How long a new sandbox pod has to be running (image pull included) before its command fails (kubernetes driver).',
  },
  sandboxDir: {
    env: 'HANGAR_SANDBOX_DIR',
    schema: z.string().min(1).optional(),
    description: 'Where the local sandbox driver keeps each sandbox’s work directory. Default: <data dir>/sandboxes.',
  },
  sandboxUidBase: {
    env: 'HANGAR_SANDBOX_UID_BASE',
    schema: z.coerce.number().int().min(1000).max(2 ** 31 - 70_000).default(200_000),
    description: 'When Hangar runs as root, a sandbox’s commands run as user and group (this + a slot below 60000), one per live sandbox; the local driver’s deployment builds and applications as this + 65536.',
  },
  sandboxTimeoutSeconds: {
    env: 'HANGAR_SANDBOX_TIMEOUT_SECONDS',
    schema: positiveInt.default(120),
    description: 'Wall-clock limit of one sandbox command; it is killed (with everything it started) beyond it.',
  },
  sandboxCpuSeconds: {
    env: 'HANGAR_SANDBOX_CPU_SECONDS',
    schema: positiveInt.default(60),
    description: 'CPU time limit of each process of a sandbox command.',
  },
  sandboxMemoryMb: {
    env: 'HANGAR_SANDBOX_MEMORY_MB',
    schema: positiveInt.default(1024),
    description: 'Address-space limit of each process of a sandbox command, in MiB (kubernetes driver: the memory limit of the whole pod).',
  },
  sandboxMaxProcesses: {
    env: 'HANGAR_SANDBOX_MAX_PROCESSES',
    schema: positiveInt.default(256),
    description: 'Processes and threads one sandbox command may have at once (a fork bomb stops there).',
  },
  sandboxMaxFileMb: {
    env: 'HANGAR_SANDBOX_MAX_FILE_MB',
    schema: positiveInt.default(256),
    description: 'Largest file a sandbox command may write, in MiB.',
  },
  sandboxMaxOutputBytes: {
    env: 'HANGAR_SANDBOX_MAX_OUTPUT_BYTES',
    schema: positiveInt.default(100_000),
    description: 'Output of one sandbox command the model gets (stdout and stderr together); the command is stopped beyond it.',
  },
  sandboxTmpMb: {
    env: 'HANGAR_SANDBOX_TMP_MB',
    schema: positiveInt.default(256),
    description: 'Size of the private /tmp of a sandbox command, in MiB (it is empty at every command).',
  },
  sandboxDuTimeoutMs: {
    env: 'HANGAR_SANDBOX_DU_TIMEOUT_MS',
    schema: positiveInt.default(10_000),
    description: 'How long measuring a sandbox’s disk use (`du`, after a command, at most every 10 s) may take; beyond it `du` is stopped, the log says so and the sandbox’s `disk_bytes` reads null until a measure ends in time.',
  },
  sandboxSeccomp: {
    env: 'HANGAR_SANDBOX_SECCOMP',
    schema: bool.default(true),
    description: 'Run local sandbox commands under a seccomp filter (x86_64, aarch64) that refuses, with EPERM, the system calls container runtimes refuse by default (mounts, namespaces, ptrace, kernel keyrings, bpf, perf_event_open, userfaultfd, io_uring, kernel modules, kexec, reboot…) and kills a process making a 32-bit call. Where the kernel refuses the filter, the log says so and commands run without it.',
  },
  sandboxSweepMs: {
    env: 'HANGAR_SANDBOX_SWEEP_MS',
    schema: positiveInt.default(30_000),
    description: 'How often idle sandboxes are stopped and expired or orphaned ones removed.',
  },
  schedulePollMs: {
    env: 'HANGAR_SCHEDULE_POLL_MS',
    schema: positiveInt.default(1_000),
    description: 'Longest wait of the scheduler between two looks for due schedules (it also wakes at the next due tick, and at once on a change made through this process).',
  },
  scheduleMissedTicks: {
    env: 'HANGAR_SCHEDULE_MISSED_TICKS',
    schema: z.enum(['one', 'skip']).default('one'),
    description: 'Ticks that fell due while no server was running: `one` starts a single catch-up run, then the schedule goes on; `skip` starts none (nor the run of a tick whose scheduler stopped after claiming it, when it is taken over that late).',
  },
  scheduleTickRetentionDays: {
    env: 'HANGAR_SCHEDULE_TICK_RETENTION_DAYS',
    schema: positiveInt.default(90),
    description: 'Ticks of schedules older than this many days are deleted by a sweeper (at start and hourly), except the newest of each schedule; their runs stay.',
  },
  scheduleMissedAfterMs: {
    env: 'HANGAR_SCHEDULE_MISSED_AFTER_MS',
    schema: positiveInt.default(10_000),
    description: 'How late a tick must be to count as missed (and be marked `catch_up`) rather than merely late.',
  },
  webhookMaxAttempts: {
    env: 'HANGAR_WEBHOOK_MAX_ATTEMPTS',
    schema: positiveInt.max(20).default(6),
    description: 'Attempts of one webhook delivery (the first included) before it is given up as failed.',
  },
  webhookBackoffMs: {
    env: 'HANGAR_WEBHOOK_BACKOFF_MS',
    schema: positiveInt.default(2_000),
    description: 'Wait before the second attempt of a webhook delivery; it doubles for each further attempt (at most an hour).',
  },
  webhookTimeoutMs: {
    env: 'HANGAR_WEBHOOK_TIMEOUT_MS',
    schema: positiveInt.default(10_000),
    description: 'Time limit of one webhook delivery attempt.',
  },
  webhookPollMs: {
    env: 'HANGAR_WEBHOOK_POLL_MS',
    schema: positiveInt.default(500),
    description: 'How often the webhook sender looks for runs that ended with a delivery pending.',
  },
} satisfies Record<string, Setting<z.ZodType>>);

/**
 * The duration rules: every setting whose variable ends in `_MS` or `_SECONDS` (a duration, which
 * ends up in a `setTimeout`, a `setInterval`, an abort signal or a limiter's timer) gets the maximum a
 * Node.js timer can wait; every `_RETENTION_DAYS` or `_RETENTION_HOURS` setting a century; each with a
 * message naming it. Here, not per setting, so a new duration setting cannot miss it.
 */
function withLimits<T extends Record<string, Setting<z.ZodType>>>(table: T): T {
  for (const setting of Object.values(table)) {
    const rule = LIMITS.find((u) => setting.env.endsWith(u.suffix));
    if (rule === undefined) continue;
    setting.schema = setting.schema.refine((value) => typeof value !== 'number' || value <= rule.max, {
      message: `must be at most ${rule.max} ${rule.unit} (${rule.why})`,
    });
  }
  return table;
}

type Settings = typeof settings;
type Parsed = { [K in keyof Settings]: z.output<Settings[K]['schema']> };

/** The parsed, frozen configuration of one server process. */
export type Config = Readonly<Parsed & { dataDir: string }>;

/** A setting that failed validation; the message names the setting the way the user set it. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Parse configuration from command-line flags and environment variables.
 * Flags win over the environment, which wins over defaults.
 */
export function loadConfig(input: {
  flags?: Record<string, unknown>;
  env?: Record<string, string | undefined>;
  cwd?: string;
}): Config {
  const flags = input.flags ?? {};
  const env = input.env ?? {};
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, setting] of Object.entries(settings) as [keyof Settings, Setting<z.ZodType>][]) {
    const fromFlag = setting.flag === undefined ? undefined : flags[camel(setting.flag)];
    const raw = fromFlag ?? emptyToUndefined(env[setting.env]);
    const result = setting.schema.safeParse(raw);
    if (result.success) {
      out[key] = result.data;
    } else {
      const source = fromFlag !== undefined ? `--${setting.flag}` : setting.env;
      problems.push(`${source}: ${result.error.issues.map((i) => i.message).join('; ')}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`);
  out.dataDir = path.resolve(input.cwd ?? process.cwd(), out.dataDir as string);
  return Object.freeze(out) as Config;
}

/** The default of a setting whose default is one value, as written in the environment (the README's settings table shows the same). */
export function settingDefault(s: { schema: z.ZodType }): string | undefined {
  const parsed = s.schema.safeParse(undefined);
  const value: unknown = parsed.success ? parsed.data : undefined;
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
}

function describeDefault(s: Setting<z.ZodType>): string {
  const value = settingDefault(s);
  return value === undefined ? '' : ` Default: ${value}.`;
}

/** Lines describing every setting, for `--help` output. */
export function describeSettings(): string {
  return Object.values(settings)
    .map((s: Setting<z.ZodType>) => {
      const flag = s.flag ? `--${s.flag}, ` : '';
      return `  ${flag}${s.env}\n      ${s.description}${describeDefault(s)}`;
    })
    .join('\n');
}

/** Each source of HANGAR_DEPLOY_DRIVERS is a known one, named once (checked at start, before anything runs). */
function checkDriverSources(value: string, ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  for (const source of value.split(',').map((part) => part.split('=')[0]!.trim())) {
    if (!(SOURCES as readonly string[]).includes(source)) ctx.addIssue({ code: 'custom', message: `unknown source "${source}" (sources: ${SOURCES.join(', ')})` });
    else if (seen.has(source)) ctx.addIssue({ code: 'custom', message: `source "${source}" is given twice` });
    seen.add(source);
  }
}

function isOrigin(value: string): boolean {
  if (value === '*') return true;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

function emptyToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
