// The composition root: configuration → database → services → app → listen, and the reverse on close.
import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createAdaptorServer, type ServerType } from '@hono/node-server';
import type { DestinationStream } from 'pino';
import type { BackgroundTask } from './background.js';
import { prepareDataDir, type PreparedDataDir } from './config/data-dir.js';
import type { Config } from './config/index.js';
import { createServices, deferredRuntime, type Services } from './core/services.js';
import { NotificationBus } from './db/bus.js';
import { agentRunTracing } from './core/tracing/agent-runs.js';
import { traceSweeper } from './core/tracing/sweeper.js';
import { runEventSweeper } from './core/runs/sweeper.js';
import { temporaryThreadSweeper } from './core/threads/sweeper.js';
import { createTraceExporters } from './tracing/export/index.js';
import { createCipher, loadSecretKey } from './core/secrets/cipher.js';
import { checkSecretKey } from './core/secrets/check.js';
import { KeyCache } from './core/workspaces/key-cache.js';
import { ensureDatabase, startEmbeddedDatabase, type EmbeddedDatabase } from './db/embedded.js';
import { openDatabase, reachConfiguredDatabase, type DatabaseHandle } from './db/index.js';
import { databaseGauges } from './db/gauges.js';
import { migrate, pendingMigrations } from './db/migrate.js';
import { createApp } from './http/app.js';
import { StreamSlots } from './http/sse.js';
import { closeConnectionsOnStop } from './http/keep-alive.js';
import { Runtime } from './runtime/index.js';
import type { Admissions } from './runtime/admissions.js';
import type { MirrorOp } from './runtime/events/hub.js';
import type { WorkerPool } from './runtime/worker.js';
import { captureConsole, createLogger, type Logger } from './logging.js';
import { createMetrics, type Metrics } from './metrics.js';
import { createReconciler, templateNames } from './deploy/index.js';
import { parseRouting } from './deploy/routing.js';
import { createSandboxService } from './sandbox/index.js';
import { Scheduler } from './core/schedules/scheduler.js';
import { scheduleTickSweeper } from './core/schedules/sweeper.js';
import { uploadSweeper } from './core/deployments/uploads.js';
import { WebhookDeliverer } from './core/webhooks/deliverer.js';
import { EgressGuard, installEgressScopes } from './net/egress.js';
import { VERSION } from './version.js';
import { startExecutorThread, type ExecutorThread } from './executor-thread.js';
import { idleReclaimer } from './reclaim.js';
import { parseNamespaces } from './core/deployments/k8s-policy.js';
import { type LocalRepoPolicy, parseRoots } from './core/local-repos.js';

export { VERSION };

/** A running Hangar server. */
export interface Hangar {
  /** Base URL, for example http://127.0.0.1:8124. */
  url: string;
  port: number;
  services: Services;
  runtime: Runtime;
  /** The run workers of this thread (none in an API-only process, or when runs execute on the executor thread). */
  workers: WorkerPool | undefined;
  /** The executor thread, when runs execute on one (HANGAR_EXECUTOR=thread). */
  executor: ExecutorThread | undefined;
  database: DatabaseHandle;
  logger: Logger;
  /** This process's metrics registry (served at /metrics). */
  metrics: Metrics;
  /** Drain requests and background work, then close the database (and stop the embedded one). */
  close(): Promise<void>;
  /**
   * Cut a drain in progress short (`close` was called; a second Ctrl-C): the runs still executing
   * here are handed back to the queue now, open streams end, and the stop goes on at once.
   */
  hurry(): void;
}

/** Options that are not configuration: where output goes. */
export interface StartOptions {
  /** Log destination; standard output by default. */
  logDestination?: DestinationStream;
  /** Where to announce a generated first admin key (printed once). */
  announce?: (line: string) => void;
  /**
   * @internal The executor thread (src/executor-entry.ts): serve no HTTP, and leave the first key,
   * the cluster-wide gauges and the console to the main thread.
   */
  headless?: boolean;
  /** @internal The executor thread: where what its event hub writes is told (the main thread mirrors it). */
  mirrorEvents?: ((op: MirrorOp) => void) | undefined;
}

/** Start a Hangar server with `config`. */
export async function startHangar(config: Config, options: StartOptions = {}): Promise<Hangar> {
  const logger = createLogger({ level: config.logLevel, ...(options.logDestination ? { destination: options.logDestination } : {}) });
  // Standard output carries JSON log lines only: a line for people (the first admin key) goes to
  // standard error, and third-party console output becomes log lines.
  const announce = options.announce ?? ((line: string) => process.stderr.write(`${line}\n`));
  const cleanup: (() => Promise<void>)[] = [];
  const releaseConsole = captureConsole(logger);
  cleanup.push(async () => releaseConsole());
  let dataDir: PreparedDataDir | undefined;
  try {
    // Its secret key file, and the embedded database's files, live there: a path that cannot be a
    // data directory stops the start here, named.
    dataDir = await prepareDataDir(config.dataDir);
    let embedded: EmbeddedDatabase | undefined;
    let url = config.databaseUrl;
    if (!url) {
      const pgLog = logger.child({ component: 'postgres' });
      embedded = await startEmbeddedDatabase({ dir: config.dataDir, log: (line) => pgLog.debug(line) });
      cleanup.push(() => embedded!.stop());
      url = await ensureDatabase(embedded, 'hangar');
    }
    const database = openDatabase(url);
    cleanup.push(() => database.close());
    // One registry for the process, handed to whoever records (DESIGN.md §9).
    const metrics = createMetrics();
    if (!options.headless) metrics.observeCluster(databaseGauges(database.db));
    // The run engine's control plane (run status, leases, the first event of a stream, replays) on a
    // small pool of its own: under load the main pool is full of checkpoint transactions, and a lease
    // renewal or a new stream's metadata must not wait behind them.
    const control = openDatabase(url, { max: 5 });
    cleanup.push(() => control.close());
    // An external database that cannot be reached (or refuses the credentials) is named as the
    // setting the operator wrote, not only by the driver's message (`connect ECONNREFUSED …`).
    if (config.databaseUrl) await reachConfiguredDatabase(database.pool, config.databaseUrl);
    const applied = await migrate(database.pool);
    if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');

    const secretKey = await loadSecretKey({ configured: config.secretKey, dataDir: config.dataDir });
    const cipher = createCipher(secretKey);
    await checkSecretKey(database.pool, cipher.keyId, config.secretKey ? 'HANGAR_SECRET_KEY' : `${config.dataDir}/secret.key`);
    const routing = parseRouting(config.deployDrivers);
    // The listen address is known only after listening; OAuth redirect URIs read it lazily.
    let listenUrl = '';
    const publicUrl = () => config.publicUrl ?? listenUrl;
    const keyCache = new KeyCache({ url, onError: (err) => logger.warn({ err }, 'key cache listener lost; authenticating without cache') });
    await keyCache.start();
    cleanup.push(() => keyCache.stop());
    // One outbound policy for every request to a user-supplied URL (src/net/egress.ts).
    const egress = new EgressGuard({ allow: config.egressAllow, serverHost: config.host });
    installEgressScopes();
    cleanup.push(() => egress.close());
    const localRepos: LocalRepoPolicy = { allow: config.deployAllowLocalRepos, roots: parseRoots(config.localRepoRoots) };
    logger.info({ egress: egress.summary, local_repo_roots: localRepos.allow ? localRepos.roots : [] }, 'outbound policy');
    const traceExporters = createTraceExporters(config, logger.child({ component: 'trace-export' }));
    cleanup.push(async () => {
      await Promise.all(traceExporters.map((e) => e.close()));
    });
    metrics.observeExporters(traceExporters);
    const sandboxes = createSandboxService({ config, db: database.db, logger: logger.child({ component: 'sandbox' }) });
    // One notification bus for the process (runs, events, cancels), supervised: it reconnects.
    const bus = new NotificationBus({
      connectionString: url,
      pool: database.pool,
      logger: logger.child({ component: 'bus' }),
      onReconnect: () => metrics.notificationReconnects.inc({ listener: 'bus' }),
    });
    await bus.start();
    cleanup.push(() => bus.stop());
    // A sandbox removed (reset, its thread deleted) while this process runs a command in it: the command stops.
    cleanup.push(await sandboxes.watch(bus));
    // The services are built once; the runtime is built from them and bound to them afterwards, so
    // HTTP, workers and background tasks share every instance (and its caches).
    const runtimePorts = deferredRuntime();
    const services = createServices({ db: database.db, controlDb: control.db, cipher, logger, publicUrl, keyCache, traceExporters, egress, localRepos, runtime: runtimePorts.ports, deploy: { routing, templates: templateNames, k8sPolicy: { namespaces: parseNamespaces(config.deployK8sNamespaces), pod: config.deployK8sPodPolicy } }, sandboxes });
    const base = services;
    // Trace redaction keeps each workspace's tool server secrets while the bus reports their changes.
    cleanup.push(await services.tracing.watchToolServers(bus));
    const runtime = await Runtime.open({
      bus,
      controlPool: control.pool,
      lifecycle: services.runLifecycle,
      db: database.db,
      pool: database.pool,
      databaseUrl: url,
      agents: base.agents,
      mcpServers: base.mcpServers,
      oauth: base.oauth,
      modelConfigs: base.modelConfigs,
      logger: logger.child({ component: 'runtime' }),
      egress,
      metrics,
      // Every run is traced: the tracer is one of the callbacks each run gets.
      sandboxes: { service: sandboxes, timeoutSeconds: config.sandboxTimeoutSeconds, maxOutputBytes: config.sandboxMaxOutputBytes },
      callbackFactories: config.tracing ? [agentRunTracing({ db: database.db, tracing: base.tracing, logger: logger.child({ component: 'tracing' }) })] : [],
      settings: {
        workerConcurrency: config.workerConcurrency,
        leaseMs: config.runLeaseMs,
        pollMs: config.runPollMs,
        maxAttempts: config.runMaxAttempts,
        modelLimits: { timeoutMs: config.modelTimeoutMs, maxRetries: config.modelMaxRetries },
        deadlines: { runTimeoutMs: config.runTimeoutMs, modelCallTimeoutMs: config.modelCallTimeoutMs, modelIdleTimeoutMs: config.modelIdleTimeoutMs },
        toolLimits: { connectTimeoutMs: config.toolConnectTimeoutMs, callTimeoutMs: config.toolTimeoutMs },
        recursionLimit: config.recursionLimit,
        checkpointDurability: config.checkpointDurability,
        drainTimeoutMs: config.drainTimeoutMs,
      },
    });
    cleanup.push(() => runtime.close());
    runtimePorts.bind(runtime.ports());
    if (options.mirrorEvents) runtime.hub.mirrorTo = options.mirrorEvents;
    const firstKey = options.headless ? undefined : await services.workspaces.bootstrap({ bootstrapApiKey: config.bootstrapApiKey });
    if (firstKey) {
      announce(`Created the first admin API key (shown once, store it now):\n\n  ${firstKey}\n`);
    }

    // With an executor thread, the runs and the background work of the worker role go there.
    const threaded = config.executor === 'thread' && config.role !== 'api' && !options.headless;
    const runsHere = config.role !== 'api' && !threaded;
    const workers = runsHere ? runtime.workers() : undefined;
    const background: BackgroundTask[] = workers ? [workers] : [];
    // Every thread collects its own garbage once idle (the executor thread runs one of its own).
    background.push(idleReclaimer({ thresholdMb: config.idleGcMb, onCollect: (freed) => logger.debug({ freed_mb: freed }, 'idle: collected garbage') }));
    if (runsHere) {
      const reconciler = createReconciler({ config, db: database.db, cipher, logger, services, drivers: routing.drivers, secretKey, egress, publicUrl: () => publicUrl().replace(/\/+$/, '') });
      services.deployments.nudge = () => reconciler.changed();
      background.push(reconciler);
      background.push(sandboxes);
      background.push(traceSweeper({ tracing: services.tracing, retentionDays: config.traceRetentionDays, logger }));
      background.push(runEventSweeper({ lifecycle: services.runLifecycle, retentionDays: config.runEventRetentionDays, logger }));
      background.push(temporaryThreadSweeper({ threads: services.threads, graceSeconds: config.temporaryThreadGraceSeconds, logger }));
      background.push(scheduleTickSweeper({ db: database.db, retentionDays: config.scheduleTickRetentionDays, logger }));
      background.push(uploadSweeper({ uploads: services.deploymentUploads, retentionHours: config.deployUploadRetentionHours, logger }));
      const scheduler = new Scheduler({
        db: database.db,
        threads: services.threads,
        runs: services.runs,
        webhooks: services.webhooks,
        logger,
        settings: {
          pollMs: config.schedulePollMs,
          missedAfterMs: config.scheduleMissedAfterMs,
          missedTicks: config.scheduleMissedTicks,
          batchSize: 100,
          startConcurrency: 16,
        },
      });
      services.schedules.nudge = () => scheduler.wake();
      background.push(scheduler);
      background.push(
        new WebhookDeliverer({
          db: database.db,
          webhooks: services.webhooks,
          state: runtime.ports().state,
          logger,
          // Webhook URLs are user-supplied: deliveries go through the outbound guard at connect time.
          fetch: egress.fetch,
          settings: { pollMs: config.webhookPollMs, maxAttempts: config.webhookMaxAttempts, backoffMs: config.webhookBackoffMs, timeoutMs: config.webhookTimeoutMs },
        }),
      );
    }
    for (const task of background) {
      await task.start();
      cleanup.push(async () => task.stop());
    }
    let executor: ExecutorThread | undefined;
    if (threaded) {
      const write = options.logDestination ? (line: string) => options.logDestination!.write(line) : (line: string) => process.stdout.write(line);
      executor = await startExecutorThread({
        config: { ...config, databaseUrl: url },
        logger,
        writeLog: write,
        // The thread's run events reach streams here from its hub, not through table reads.
        onEvents: (op) => runtime.hub.applyMirror(op),
        onLost: () => runtime.hub.dropMirrors(),
      });
      // Stopped before the database closes: its runs drain like a worker pool's.
      const thread = executor;
      cleanup.push(() => thread.stop());
      metrics.addSource(() => thread.metrics());
      // Runs started and cancelled here reach the thread's workers through its port (no round trip
      // through PostgreSQL); the bus still tells other processes what the thread cannot take.
      const detach = runtime.queue.attach({ wake: () => thread.wake(), cancel: (id) => thread.cancel(id), canClaim: () => true });
      cleanup.push(async () => detach());
      services.deployments.nudge = () => thread.nudge('deployments');
      services.schedules.nudge = () => thread.nudge('schedules');
    }
    if (options.headless) {
      const close = async () => {
        await runCleanup(cleanup, logger);
      };
      return { url: '', port: 0, services, runtime, workers, executor, database, logger, metrics, close, hurry: () => workers?.hurry() };
    }

    const app = createApp({
      services,
      logger,
      info: { version: VERSION, storage: embedded ? 'embedded' : 'external', role: config.role, tracing: config.tracing },
      bodyLimitBytes: config.bodyLimitBytes,
      heartbeatMs: config.heartbeatMs,
      streams: new StreamSlots(config.streamCapacity),
      limits: { authFailureLimit: config.authFailureLimit, authFailureWindowSeconds: config.authFailureWindowSeconds, keyRateLimit: config.keyRateLimit },
      corsOrigins: config.corsOrigins,
      metrics,
      readiness: async () => {
        try {
          const pending = await pendingMigrations(database.pool);
          return { ready: pending.length === 0, database: 'ok' as const, pending_migrations: pending };
        } catch {
          return { ready: false, database: 'unreachable' as const, pending_migrations: [] };
        }
      },
    });
    const { server, stopKeepingAlive } = await listen(app.fetch, config.host, config.port, runtime.queue.admissions).catch((error: unknown) => {
      throw new Error(`cannot listen on ${config.host}:${config.port} (HOST / --host, PORT / --port): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    });
    const port = (server.address() as AddressInfo).port;
    const baseUrl = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;
    logger.info({ url: baseUrl, storage: embedded ? 'embedded' : 'external', version: VERSION }, 'hangar listening');
    listenUrl = baseUrl;

    let closing: Promise<void> | undefined;
    let cut!: () => void;
    const drainCut = new Promise<void>((resolve) => (cut = resolve));
    const hurry = () => {
      cut();
      workers?.hurry();
      executor?.hurry();
    };
    const close = () =>
      (closing ??= (async () => {
        // Runs here get the drain timeout as requests do; the workers then hand those still running
        // back to the queue, and every open stream ends (its client joins again elsewhere).
        await stopServer(
          server,
          stopKeepingAlive,
          config.drainTimeoutMs,
          async () => {
            await workers?.stop();
            await executor?.stop();
          },
          () => runtime.hub.endStreams(),
          drainCut,
        );
        await runCleanup(cleanup, logger);
        logger.info('hangar stopped');
      })());
    return { url: baseUrl, port, services, runtime, workers, executor, database, logger, metrics, close, hurry };
  } catch (error) {
    await runCleanup(cleanup, logger);
    // A refused start leaves no empty data directory behind (the folders it created for nothing).
    await dataDir?.undo();
    throw error;
  }
}

/**
 * Connections the kernel may hold completed for us before we accept them. Node's default (511) is
 * overflowed by a burst of streams arriving while the event loop is busy: the kernel then drops the
 * handshakes and clients retry after 1, 2, 4… s (seen as seconds before a stream's first byte that the
 * server never measured). The kernel caps it at net.core.somaxconn.
 */
const LISTEN_BACKLOG = 4096;

/** The listening server, and what ends its keep-alive connections as it stops (closeConnectionsOnStop). */
function listen(fetch: (req: Request) => Response | Promise<Response>, hostname: string, port: number, admissions: Admissions): Promise<{ server: ServerType; stopKeepingAlive: () => void }> {
  return new Promise((resolve, reject) => {
    const server = createAdaptorServer({ fetch, serverOptions: { ServerResponse: BodylessResponse } });
    holdForFirstRequests(server as import('node:http').Server, admissions);
    const stopKeepingAlive = closeConnectionsOnStop(server as import('node:http').Server);
    server.once('error', reject);
    server.listen({ port, host: hostname, backlog: LISTEN_BACKLOG }, () => resolve({ server, stopKeepingAlive }));
  });
}

/**
 * @hono/node-server gives every answer without a content-type `text/plain`, 204 and 304 too: an
 * answer that has no body must not say what its body is. Here, for every route at once.
 */
class BodylessResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  override writeHead(statusCode: number, ...rest: [string?, (OutgoingHttpHeaders | OutgoingHttpHeader[])?] | [(OutgoingHttpHeaders | OutgoingHttpHeader[])?]): this {
    if (statusCode === 204 || statusCode === 304) {
      const at = rest.findIndex((arg) => arg !== undefined && typeof arg === 'object');
      if (at >= 0) rest[at] = withoutContentType(rest[at] as OutgoingHttpHeaders | OutgoingHttpHeader[]);
      this.removeHeader('content-type');
    }
    return super.writeHead(statusCode, ...(rest as [string, OutgoingHttpHeaders]));
  }
}

function withoutContentType(headers: OutgoingHttpHeaders | OutgoingHttpHeader[]): OutgoingHttpHeaders | OutgoingHttpHeader[] {
  if (!Array.isArray(headers)) return Object.fromEntries(Object.entries(headers).filter(([key]) => key.toLowerCase() !== 'content-type'));
  // The flat form: name, value, name, value…
  const out: OutgoingHttpHeader[] = [];
  for (let i = 0; i + 1 < headers.length; i += 2) if (String(headers[i]).toLowerCase() !== 'content-type') out.push(headers[i]!, headers[i + 1]!);
  return out;
}

/**
 * A new connection counts as a start being accepted (src/runtime/admissions.ts) until its first
 * request reaches the server, it closes, or `admissions.firstRequestHoldMs` pass. In a burst, most of the
 * streams' connections are accepted before their requests are read: counted only from the route
 * handler on, those starts waited behind executions the workers had begun meanwhile on this event
 * loop. A connection that sends nothing holds executions back that long at most (250 ms).
 */
function holdForFirstRequests(server: import('node:http').Server, admissions: Admissions): void {
  const waiting = new WeakMap<Socket, () => void>();
  server.on('connection', (socket: Socket) => {
    const leave = admissions.enter();
    const timer = setTimeout(() => done(), admissions.firstRequestHoldMs);
    timer.unref();
    const done = () => {
      clearTimeout(timer);
      socket.off('close', done);
      waiting.delete(socket);
      leave();
    };
    waiting.set(socket, done);
    socket.once('close', done);
  });
  server.on('request', (request: import('node:http').IncomingMessage) => waiting.get(request.socket)?.());
}

/** How long the streams ended at the end of a drain have to send what is stored of their runs. */
const STREAM_END_GRACE_MS = 2_000;

/**
 * Stop taking connections and wait for open requests and streams up to `timeoutMs` (or until `cut`); `stopRuns`
 * (started at once) lets this process's runs go on as long, then hands the rest back to the queue.
 * Each connection closes once its answer is sent (`stopKeepingAlive`), so the stop waits for
 * answers, not for idle keep-alive connections. Streams still open then (of runs handed back, or
 * executing in other processes) are ended by `endStreams` once they have sent what is stored;
 * connections still open STREAM_END_GRACE_MS later are closed.
 */
async function stopServer(
  server: ServerType,
  stopKeepingAlive: () => void,
  timeoutMs: number,
  stopRuns: () => Promise<void>,
  endStreams: () => void,
  cut: Promise<void>,
): Promise<void> {
  const http = server as import('node:http').Server;
  const closed = new Promise<void>((resolve) => http.close(() => resolve()));
  stopKeepingAlive();
  const runsStopped = stopRuns();
  let timer: NodeJS.Timeout | undefined;
  const late = await Promise.race([closed.then(() => false), cut.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)))]);
  clearTimeout(timer);
  if (late) {
    await runsStopped.catch(() => undefined); // the clean-up that follows stops them again and logs why
    // Runs still going were handed back (their streams here ended) or execute elsewhere: every
    // stream still open sends what is stored and ends, and its client joins again elsewhere.
    endStreams();
    const grace = setTimeout(() => http.closeAllConnections?.(), STREAM_END_GRACE_MS);
    await closed;
    clearTimeout(grace);
  }
}

async function runCleanup(steps: (() => Promise<void>)[], logger: Logger): Promise<void> {
  for (const step of steps.reverse()) {
    try {
      await step();
    } catch (error) {
      logger.error({ err: error }, 'error while stopping');
    }
  }
  steps.length = 0;
}
