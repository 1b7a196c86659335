// Prometheus metrics (prom-client). One registry per server, created by the composition root and handed
// to whoever records (DESIGN.md §9); it sits below every layer so the HTTP edge, the runtime, tracing
// and the deployment reconciler may all record into it. Counts that live in the database (runs and
// deployments by status, the run queue) are read from it at scrape time, so every replica reports
// the same cluster-wide figures; what happens inside one process (requests, run durations, event-log
// writes, reconnects, exporter drops) is counted by that process.
import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type MetricObjectWithValues, type MetricValue } from 'prom-client';

/** Metrics as prom-client exports them for aggregation (from another thread of the process). */
export type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[];

/** Figures read from the database when Prometheus scrapes. */
export interface ClusterGauges {
  runsByStatus(): Promise<Record<string, number>>;
  /** Pending runs, and how long the oldest has waited (seconds; 0 when none). */
  queue(): Promise<{ depth: number; oldestWaitSeconds: number }>;
  deploymentsByStatus(): Promise<Record<string, number>>;
}

/** The metrics of one Hangar process. */
export interface Metrics {
  readonly registry: Registry;
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  /** Runs this process finished, by final status. */
  readonly runsFinished: Counter<'status'>;
  /** Time from claim to settle of a run executed by this process. */
  readonly runDuration: Histogram<'status'>;
  /** Time a pending run waited before a worker of this process claimed it. */
  readonly queueWait: Histogram;
  /** Time from appending a run event to having it written to the event log. */
  readonly eventLogWriteLag: Histogram;
  /** Reconnects of the PostgreSQL notification listener(s) of this process; `listener` names which. */
  readonly notificationReconnects: Counter<'listener'>;
  /** Read the database-backed gauges from `gauges` at each scrape (set once, by the composition root). */
  observeCluster(gauges: ClusterGauges): void;
  /** Report each trace exporter's dropped items (read at each scrape). */
  observeExporters(exporters: readonly { name: string; stats(): { dropped: number; queued: number } }[]): void;
  /** Add what another part of the process counts (the executor thread's registry) to every scrape. */
  addSource(read: () => Promise<MetricsSnapshot>): void;
  /** This process's own Hangar metrics (no Node.js process metrics), for a scrape elsewhere to add. */
  snapshot(): Promise<MetricsSnapshot>;
  /** The scrape: this registry plus every added source, summed (Prometheus text format). */
  render(): Promise<string>;
}

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** A fresh registry with Hangar's metrics (and Node's process metrics). */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  let cluster: ClusterGauges | undefined;
  let exporters: readonly { name: string; stats(): { dropped: number; queued: number } }[] = [];
  const sources: (() => Promise<MetricsSnapshot>)[] = [];

  const byStatus = (name: string, help: string, read: () => Promise<Record<string, number>> | undefined) =>
    new Gauge({
      name,
      help,
      labelNames: ['status'],
      registers: [registry],
      async collect() {
        const counts = await read();
        if (!counts) return;
        this.reset();
        for (const [status, n] of Object.entries(counts)) this.set({ status }, n);
      },
    });
  byStatus('hangar_runs', 'Runs in the database by status (cluster-wide).', () => cluster?.runsByStatus());
  byStatus('hangar_deployments', 'Deployments in the database by status (cluster-wide).', () => cluster?.deploymentsByStatus());
  let queue: Promise<{ depth: number; oldestWaitSeconds: number }> | undefined;
  const readQueue = () => (queue ??= (cluster?.queue() ?? Promise.resolve({ depth: 0, oldestWaitSeconds: 0 })).finally(() => setImmediate(() => (queue = undefined))));
  new Gauge({
    name: 'hangar_run_queue_depth',
    help: 'Pending runs waiting for a worker (cluster-wide).',
    registers: [registry],
    async collect() {
      this.set((await readQueue()).depth);
    },
  });
  new Gauge({
    name: 'hangar_run_queue_oldest_wait_seconds',
    help: 'How long the oldest pending run has waited (cluster-wide; 0 when none wait).',
    registers: [registry],
    async collect() {
      this.set((await readQueue()).oldestWaitSeconds);
    },
  });
  new Gauge({
    name: 'hangar_trace_exporter_dropped',
    help: 'Run reports a trace exporter dropped since this process started (queue full or send failed).',
    labelNames: ['exporter'],
    registers: [registry],
    collect() {
      for (const e of exporters) this.set({ exporter: e.name }, e.stats().dropped);
    },
  });
  new Gauge({
    name: 'hangar_trace_exporter_queued',
    help: 'Run reports waiting in a trace exporter queue.',
    labelNames: ['exporter'],
    registers: [registry],
    collect() {
      for (const e of exporters) this.set({ exporter: e.name }, e.stats().queued);
    },
  });

  return {
    registry,
    httpRequests: new Counter({ name: 'hangar_http_requests_total', help: 'HTTP requests answered, by route pattern and status.', labelNames: ['method', 'route', 'status'], registers: [registry] }),
    httpDuration: new Histogram({ name: 'hangar_http_request_duration_seconds', help: 'Time to answer an HTTP request (to the first byte of a stream).', labelNames: ['method', 'route', 'status'], buckets: SECONDS, registers: [registry] }),
    runsFinished: new Counter({ name: 'hangar_runs_finished_total', help: 'Runs this process executed to an end, by final status.', labelNames: ['status'], registers: [registry] }),
    runDuration: new Histogram({ name: 'hangar_run_duration_seconds', help: 'Time from claiming a run to settling it, by final status.', labelNames: ['status'], buckets: SECONDS, registers: [registry] }),
    queueWait: new Histogram({ name: 'hangar_run_queue_wait_seconds', help: 'Time a run waited in the queue before this process claimed it.', buckets: SECONDS, registers: [registry] }),
    eventLogWriteLag: new Histogram({ name: 'hangar_event_log_write_lag_seconds', help: 'Time from appending a run event to having it written to the event log.', buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registers: [registry] }),
    notificationReconnects: new Counter({ name: 'hangar_notification_bus_reconnects_total', help: 'Reconnects of a PostgreSQL LISTEN connection of this process.', labelNames: ['listener'], registers: [registry] }),
    observeCluster(gauges) {
      cluster = gauges;
    },
    observeExporters(list) {
      exporters = list;
    },
    addSource(read) {
      sources.push(read);
    },
    async snapshot() {
      return ((await registry.getMetricsAsJSON()) as MetricsSnapshot).filter((m) => m.name.startsWith('hangar_'));
    },
    async render() {
      if (sources.length === 0) return registry.metrics();
      // A source that cannot answer (its thread is restarting) leaves its figures out of this scrape.
      const others = await Promise.all(sources.map((read) => read().catch(() => [] as MetricsSnapshot)));
      return AggregatorRegistry.aggregate([(await registry.getMetricsAsJSON()) as MetricsSnapshot, ...others]).metrics();
    },
  };
}
