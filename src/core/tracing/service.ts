// Tracing: projects, run ingestion (LangSmith SDK, Hangar's own tracer), reads and stats.
// Everything stored is redacted first; what is stored is then offered to the exporters.
import type { Logger } from '../../logging.js';
import { dottedOrderSegment, type RunBatch, type RunCreate, type TraceRun, type TraceRunTree } from '../../tracing/run.js';
import type { ExportBatch, ExporterStats, TraceExporter } from '../../tracing/export/exporter.js';
import { Redactor } from '../../tracing/redact.js';
import type { AgentRunLink, ProjectStats, RootRun, RootRunFilter, TraceStore, TracingProject } from '../../tracing/store.js';
import { type Caller, requireWrite } from '../caller.js';
import { type FieldIssue, HangarError, invalid } from '../errors.js';
import type { McpServerService } from '../mcp-servers/service.js';

/** Announces changes of tool server records (migration 1800): payload, the workspace id. */
export const TOOL_SERVERS_CHANNEL = 'hangar_tool_servers';

/** What the tracing service needs of the process's notification bus (src/db/bus.ts). */
export interface ToolServerWatchBus {
  readonly connected: boolean;
  subscribe(channel: string, handler: { onMessage(payload: string): void; onGap?(): void }): Promise<() => Promise<void>>;
}

/** What the tracing service is built from. */
export interface TracingServiceDeps {
  store: TraceStore;
  mcpServers: McpServerService;
  exporters: TraceExporter[];
  logger: Logger;
}

/** How long after its run ended a trace still being written by another process is waited for. */
const TRACE_WRITE_GRACE_MS = 60_000;
/** The longest a read waits for such a trace; after that it shows the trace as stored. */
const TRACE_WRITE_WAIT_MS = 3_000;

/** Filters of a runs page, as the API takes them. */
export type RunListQuery = Omit<RootRunFilter, 'projectId' | 'after'> & { cursor?: string | undefined };

/** Tracing projects and runs of workspaces. */
export class TracingService {
  /** Header values of each workspace's tool servers, with the version of the records they were read from. */
  private readonly secretCache = new Map<string, { version: string; values: string[] }>();
  /**
   * The same values kept while the bus tells this process of every change (`watchToolServers`): no
   * read before each trace write. `changes` counts the notifications and gaps, so that a read that
   * overlapped one is not kept.
   */
  private readonly watchedSecrets = new Map<string, string[]>();
  private watchBus: ToolServerWatchBus | undefined;
  private changes = 0;
  /** Tool server records skipped because their headers could not be decrypted (a counter for operators). */
  undecryptableSecrets = 0;
  /** Projects by workspace and name ('' for the default): projects are never deleted or renamed. */
  private readonly projectCache = new Map<string, TracingProject>();
  /** Agent runs whose trace this process is writing, with a wait for what is written so far. */
  private readonly writing = new Map<string, () => Promise<void>>();

  constructor(private readonly deps: TracingServiceDeps) {
    // A tool server written through this process counts at once, before its notification arrives.
    deps.mcpServers.onChange((workspaceId) => this.forgetSecrets(workspaceId));
  }

  /** The project named `name` (created when missing). Deployments call this with their name. */
  async ensureProject(workspaceId: string, name: string): Promise<TracingProject> {
    return this.deps.store.ensureProject(workspaceId, name);
  }

  /** The workspace's default project (created on first use). */
  async defaultProject(workspaceId: string): Promise<TracingProject> {
    return this.deps.store.defaultProject(workspaceId);
  }

  /** Every project of the caller's workspace, the default one included. */
  async listProjects(caller: Caller): Promise<TracingProject[]> {
    await this.deps.store.defaultProject(caller.workspaceId);
    return this.deps.store.listProjects(caller.workspaceId);
  }

  async createProject(caller: Caller, input: { name: string; description?: string | undefined }): Promise<TracingProject> {
    requireWrite(caller);
    const project = await this.deps.store.createProject(caller.workspaceId, input.name, input.description ?? null);
    if (!project) throw new HangarError('tracing_project_name_taken', `a tracing project named "${input.name}" already exists in this workspace`);
    return project;
  }

  async getProject(caller: Caller, projectId: string): Promise<TracingProject> {
    const project = await this.deps.store.getProject(caller.workspaceId, projectId);
    if (!project) throw new HangarError('tracing_project_not_found', `no tracing project with id ${projectId} in this workspace`);
    return project;
  }

  /** Store run reports sent by a client (the LangSmith SDK); returns how many reports were taken. */
  async ingest(caller: Caller, batch: RunBatch): Promise<number> {
    requireWrite(caller);
    // A project named by id must exist: filing the run elsewhere would hide it from whoever looks there.
    for (const id of new Set(batch.post.map((r) => r.projectId).filter((id): id is string => id !== undefined))) {
      if (!(await this.deps.store.getProject(caller.workspaceId, id))) {
        throw new HangarError('tracing_project_not_found', `no tracing project with id ${id} (session_id) in this workspace`);
      }
    }
    // After the confinement check: a confined key learns nothing of another project's runs.
    if (caller.tracesProject !== undefined) await this.confine(caller.workspaceId, caller.tracesProject, batch);
    await this.checkTimes(caller.workspaceId, batch);
    if (caller.tracesProject !== undefined) {
      await this.record(caller.workspaceId, { post: batch.post.map((r) => ({ ...r, projectName: caller.tracesProject, projectId: undefined })), patch: batch.patch }, { fallbackProject: caller.tracesProject });
    } else {
      // The project name comes from the application's settings as its run names do: redacted the same
      // way, so a token pasted there is neither shown in the project list nor exported.
      const redactor = new Redactor(await this.knownSecrets(caller.workspaceId));
      await this.record(caller.workspaceId, { ...batch, post: batch.post.map((r) => (r.projectName === undefined ? r : { ...r, projectName: redactor.string(r.projectName) })) });
    }
    return batch.post.length + batch.patch.length;
  }

  /** A run cannot end before it starts (its latency would be negative): a 422 naming each such run. */
  private async checkTimes(workspaceId: string, batch: RunBatch): Promise<void> {
    const starts = new Map(batch.post.map((r) => [r.id, r.startTime]));
    const issues: FieldIssue[] = [];
    const check = (op: 'post' | 'patch', id: string, start: Date | undefined, end: Date | undefined) => {
      if (start && end && end.getTime() < start.getTime()) {
        issues.push({ loc: ['body', `${op}.${id}`, 'end_time'], msg: `run ${id} ends (${end.toISOString()}) before it starts (${start.toISOString()})`, type: 'value_error' });
      }
    };
    for (const run of batch.post) check('post', run.id, run.startTime, run.endTime);
    for (const run of batch.patch) {
      if (!run.endTime) continue;
      check('patch', run.id, starts.get(run.id) ?? (await this.deps.store.findRun(workspaceId, run.id))?.startTime, run.endTime);
    }
    if (issues.length > 0) throw invalid(issues);
  }

  /** A key of a deployed application writes into its own project only: anything else is forbidden. */
  private async confine(workspaceId: string, project: string, batch: RunBatch): Promise<void> {
    const elsewhere = (what: string) => new HangarError('forbidden', `this key may only send traces to project "${project}", not ${what}`);
    for (const run of batch.post) {
      if (run.projectName !== undefined && run.projectName !== project) throw elsewhere(`"${run.projectName}"`);
      if (run.projectId !== undefined && (await this.deps.store.getProject(workspaceId, run.projectId))?.name !== project) throw elsewhere(`project ${run.projectId}`);
    }
    // Runs it reports, and the traces and parents it hangs them under, must be its project's (or new):
    // a create with another project's run id would take that run over, a parent would graft onto its trace.
    const referenced = new Set<string>();
    for (const run of [...batch.post, ...batch.patch]) {
      referenced.add(run.id);
      if (run.traceId) referenced.add(run.traceId); // empty: a child placed under its parent later
      if (run.parentRunId) referenced.add(run.parentRunId);
    }
    const owners = await this.deps.store.projectNamesOfRuns(workspaceId, [...referenced]);
    for (const [runId, name] of owners) if (name !== project) throw elsewhere(`run ${runId} of "${name}"`);
  }

  /**
   * Store run reports of a workspace (Hangar's own tracer calls this directly): redact, resolve
   * projects, write, then offer the batch to the exporters. `secrets` are extra exact values to redact.
   * `link`: the batch starts the trace of an agent run, recorded with the batch's runs in one statement.
   */
  async record(workspaceId: string, batch: RunBatch, options: { secrets?: string[]; fallbackProject?: string; link?: AgentRunLink | undefined } = {}): Promise<void> {
    const redactor = new Redactor([...(await this.knownSecrets(workspaceId)), ...(options.secrets ?? [])]);
    const clean = await this.placeChildren(workspaceId, redactBatch(batch, redactor));
    const projectNames: Record<string, string> = {};
    const resolve = async (run: RunCreate): Promise<TracingProject> => {
      if (run.projectId) {
        const project = await this.deps.store.getProject(workspaceId, run.projectId);
        if (project) return project;
      }
      return this.projectNamed(workspaceId, run.projectName);
    };
    const creates = [];
    for (const run of dedupe(clean.post)) {
      const project = await resolve(run);
      projectNames[run.id] = project.name;
      creates.push({ ...run, projectId: project.id });
    }
    try {
      await this.deps.store.insertRuns(workspaceId, creates, options.link);
    } catch (error) {
      // A cached project can vanish with its workspace (deleted by an operator): forget the cache.
      this.projectCache.clear();
      throw error;
    }
    if (clean.patch.length > 0) {
      const fallback = await this.projectNamed(workspaceId, options.fallbackProject);
      for (const update of clean.patch) await this.deps.store.updateRun(workspaceId, update, fallback.id);
    }
    const exported: ExportBatch = { workspaceId, post: clean.post, patch: clean.patch, projectNames };
    for (const exporter of this.deps.exporters) exporter.offer(exported);
  }

  /**
   * Children reported without `trace_id` or `dotted_order` (empty here) get their parent's trace and a
   * dotted order beneath the parent's, the parent found earlier in the batch or in the store; a child
   * whose parent is unknown becomes the root of its own trace.
   */
  private async placeChildren(workspaceId: string, batch: RunBatch): Promise<RunBatch> {
    if (!batch.post.some((r) => r.parentRunId && (r.traceId === '' || r.dottedOrder === ''))) return batch;
    const placed = new Map<string, { traceId: string; dottedOrder: string }>();
    const post: RunCreate[] = [];
    for (const run of batch.post) {
      let next = run;
      if (run.parentRunId && (run.traceId === '' || run.dottedOrder === '')) {
        const parent = placed.get(run.parentRunId) ?? (await this.deps.store.findRun(workspaceId, run.parentRunId));
        const own = dottedOrderSegment(run.startTime, run.id);
        next = {
          ...run,
          traceId: run.traceId || (parent?.traceId ?? run.id),
          dottedOrder: run.dottedOrder || (parent?.dottedOrder ? `${parent.dottedOrder}.${own}` : own),
        };
      }
      placed.set(next.id, next);
      post.push(next);
    }
    return { post, patch: batch.patch };
  }

  /** The project `name` (the default one when undefined), created when missing; cached. */
  private async projectNamed(workspaceId: string, name: string | undefined): Promise<TracingProject> {
    const key = `${workspaceId}/${name ?? ''}`;
    let project = this.projectCache.get(key);
    if (!project) {
      project = name ? await this.deps.store.ensureProject(workspaceId, name) : await this.deps.store.defaultProject(workspaceId);
      if (this.projectCache.size > 10_000) this.projectCache.clear();
      this.projectCache.set(key, project);
    }
    return project;
  }

  /** One page of a project's root runs, newest first, and the cursor of the next page. */
  async listRuns(caller: Caller, projectId: string, query: RunListQuery): Promise<{ runs: RootRun[]; nextCursor: string | null }> {
    await this.getProject(caller, projectId);
    const runs = await this.deps.store.listRootRuns(caller.workspaceId, {
      ...query,
      projectId,
      limit: query.limit + 1,
      after: query.cursor ? decodeCursor(query.cursor) : undefined,
    });
    const page = runs.slice(0, query.limit);
    const last = page.at(-1);
    return { runs: page, nextCursor: runs.length > query.limit && last ? encodeCursor(last) : null };
  }

  /** One run with every run beneath it (an agent run's trace once it is written: see `complete`). */
  async getRun(caller: Caller, runId: string): Promise<TraceRunTree> {
    const read = () => this.deps.store.getRunTree(caller.workspaceId, runId);
    let tree = await read();
    if (!tree) throw new HangarError('tracing_run_not_found', `no traced run with id ${runId} in this workspace`);
    // The root of an agent run's trace, still pending: its run may have ended with the trace's last write under way.
    const meta = tree.extra.metadata as { run_id?: unknown; thread_id?: unknown } | undefined;
    if (tree.status === 'pending' && tree.parentRunId === null && typeof meta?.run_id === 'string' && typeof meta.thread_id === 'string') {
      const ended = await this.deps.store.agentRunEnded(caller.workspaceId, meta.thread_id, meta.run_id);
      if (ended) tree = (await this.complete(meta.run_id, ended, read)) ?? tree;
    }
    return tree;
  }

  /**
   * The trace tree of an agent run; `trace_not_found` when the run was not traced (yet). `endedAt`:
   * when the run ended, if it has; its trace is then read once its last write is stored.
   */
  async traceOfAgentRun(caller: Caller, threadId: string, runId: string, endedAt?: Date | null): Promise<TraceRunTree> {
    const read = async () => {
      const root = await this.deps.store.rootOfAgentRun(caller.workspaceId, threadId, runId);
      return root ? this.deps.store.getRunTree(caller.workspaceId, root) : undefined;
    };
    const tree = endedAt ? await this.complete(runId, endedAt, read) : await read();
    if (!tree) throw new HangarError('trace_not_found', `run ${runId} has no trace (tracing was off, or the run has not started)`);
    return tree;
  }

  /**
   * Record that this process is writing the trace of agent run `runId`: a run's stream ends when the
   * run is settled, and its trace's last write (the whole tree) follows, off the run's path. `flush`
   * resolves once every write so far is stored; call the returned function when the trace is written.
   */
  traceWriting(runId: string, flush: () => Promise<void>): () => void {
    this.writing.set(runId, flush);
    return () => {
      if (this.writing.get(runId) === flush) this.writing.delete(runId);
    };
  }

  /**
   * `read()` once the trace of an agent run that ended at `endedAt` is complete: when this process
   * writes it, after its write; else, while its root is stored as pending, by reading again for a
   * short while (another process writes it) — only for a run that ended moments ago, so that a
   * trace left unfinished by a crash costs an old run's reader nothing.
   */
  private async complete(runId: string, endedAt: Date, read: () => Promise<TraceRunTree | undefined>): Promise<TraceRunTree | undefined> {
    const local = this.writing.get(runId);
    if (local) await local().catch(() => undefined);
    let tree = await read();
    // No trace at all: the run was not traced (its root is stored when it starts).
    if (!tree || tree.status !== 'pending' || local || Date.now() - endedAt.getTime() > TRACE_WRITE_GRACE_MS) return tree;
    const until = Date.now() + TRACE_WRITE_WAIT_MS;
    for (let delay = 10; tree?.status === 'pending' && Date.now() < until; delay = Math.min(delay * 2, 200)) {
      await new Promise((resolve) => setTimeout(resolve, delay));
      tree = (await read()) ?? tree;
    }
    return tree;
  }

  /** One run without children, or undefined (for callers that know the id exists elsewhere). */
  async findRun(workspaceId: string, runId: string): Promise<TraceRun | undefined> {
    return this.deps.store.findRun(workspaceId, runId);
  }

  async stats(caller: Caller, projectId: string, range: { startAfter?: Date | undefined; startBefore?: Date | undefined }): Promise<ProjectStats> {
    await this.getProject(caller, projectId);
    return this.deps.store.projectStats(caller.workspaceId, projectId, range);
  }

  /**
   * Counters of each exporter: what is queued, sent and dropped of the caller's workspace's run
   * reports (another workspace's activity is not shown; the process's totals are on `/metrics`).
   */
  exporterStats(caller: Caller): ({ name: string } & ExporterStats)[] {
    return this.deps.exporters.map((e) => ({ name: e.name, ...e.stats(caller.workspaceId) }));
  }

  /** Send everything the exporters hold now (shutdown, tests). */
  async flushExports(): Promise<void> {
    await Promise.all(this.deps.exporters.map((e) => e.flush()));
  }

  /** Delete runs older than `retentionDays`; returns how many were deleted. */
  async sweep(retentionDays: number, now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - retentionDays * 86_400_000);
    let total = 0;
    for (;;) {
      const n = await this.deps.store.deleteOlderThan(cutoff);
      total += n;
      if (n === 0) return total;
    }
  }

  /**
   * Header values of the workspace's tool servers: they must never appear in a trace. Decrypted once
   * per change of the records: a server added or changed a moment ago (on any replica) counts as soon
   * as its change is committed (through the bus) or at once (through the digest, without the bus).
   */
  private async knownSecrets(workspaceId: string): Promise<string[]> {
    const bus = this.watchBus;
    if (bus?.connected) {
      const watched = this.watchedSecrets.get(workspaceId);
      if (watched) return watched;
      const changes = this.changes;
      const values = await this.readSecrets(workspaceId);
      // Kept only if no change was announced (nor any lost) while it was read.
      if (changes === this.changes && bus.connected) {
        if (this.watchedSecrets.size > 10_000) this.watchedSecrets.clear();
        this.watchedSecrets.set(workspaceId, values);
      }
      return values;
    }
    // Without the bus (operator commands, or while its connection is down): a digest of the records
    // tells whether the values read last are still current.
    const version = await this.deps.store.toolServerHeadersVersion(workspaceId);
    const cached = this.secretCache.get(workspaceId);
    if (cached && cached.version === version) return cached.values;
    const values = await this.readSecrets(workspaceId);
    if (this.secretCache.size > 10_000) this.secretCache.clear();
    this.secretCache.set(workspaceId, { version, values });
    return values;
  }

  /**
   * Keep each workspace's tool server header values in memory while `bus` is connected, dropping them
   * when a record changes (a notification sent by the database itself, migration 1800) or when
   * notifications may have been lost (a gap). Returns the unsubscribe function.
   */
  async watchToolServers(bus: ToolServerWatchBus): Promise<() => Promise<void>> {
    const off = await bus.subscribe(TOOL_SERVERS_CHANNEL, { onMessage: (workspaceId) => this.forgetSecrets(workspaceId || undefined), onGap: () => this.forgetSecrets() });
    this.forgetSecrets();
    this.watchBus = bus;
    return async () => {
      this.watchBus = undefined;
      this.forgetSecrets();
      await off();
    };
  }

  /** Drop the kept secrets of `workspaceId` (all of them without one); a read under way is not kept. */
  private forgetSecrets(workspaceId?: string): void {
    this.changes += 1;
    if (workspaceId) this.watchedSecrets.delete(workspaceId);
    else this.watchedSecrets.clear();
  }

  /** The header values of the workspace's tool servers, decrypted now. */
  private async readSecrets(workspaceId: string): Promise<string[]> {
    // Tracing reads the headers only to redact them; an undecryptable record is skipped and counted.
    const secretValues = await this.deps.mcpServers.secretValues(workspaceId, (serverId, error) => {
      this.undecryptableSecrets += 1;
      this.deps.logger.warn(
        { workspace_id: workspaceId, mcp_server_id: serverId, err: error instanceof Error ? error.message : String(error), undecryptable_secrets_total: this.undecryptableSecrets },
        'skipped a tool server whose headers cannot be decrypted (is HANGAR_SECRET_KEY the key they were written with?)',
      );
    });
    return secretValues.flatMap((v) => [v, ...v.split(/\s+/).filter((part) => part.length >= 12)]);
  }
}

function redactBatch(batch: RunBatch, r: Redactor): RunBatch {
  const common = <T extends { inputs?: unknown; outputs?: unknown; error?: string | undefined; extra?: Record<string, unknown> | undefined; events?: unknown[] | undefined; tags?: string[] | undefined }>(run: T): T => ({
    ...run,
    ...(run.inputs !== undefined ? { inputs: r.value(run.inputs) } : {}),
    ...(run.outputs !== undefined ? { outputs: r.value(run.outputs) } : {}),
    ...(run.error !== undefined ? { error: r.string(run.error) } : {}),
    ...(run.extra !== undefined ? { extra: r.value(run.extra) as Record<string, unknown> } : {}),
    ...(run.events !== undefined ? { events: r.value(run.events) as unknown[] } : {}),
    ...(run.tags !== undefined ? { tags: run.tags.map((t) => r.string(t)) } : {}),
  });
  return {
    post: batch.post.map((run) => ({ ...common(run), name: r.string(run.name) })),
    patch: batch.patch.map(common),
  };
}

/** The SDK may report a run twice in one batch; the later report completes the earlier. */
function dedupe(runs: RunCreate[]): RunCreate[] {
  const byId = new Map<string, RunCreate>();
  for (const run of runs) {
    const prev = byId.get(run.id);
    byId.set(run.id, prev ? { ...prev, ...Object.fromEntries(Object.entries(run).filter(([, v]) => v !== undefined)) } : run);
  }
  return [...byId.values()];
}

function encodeCursor(run: TraceRun): string {
  return Buffer.from(`${run.startTime.toISOString()}|${run.id}`).toString('base64url');
}

function decodeCursor(cursor: string): { startTime: Date; id: string } {
  const [time, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const startTime = new Date(time ?? '');
  // Years 1 to 9999 only: the run times PostgreSQL holds (an edited cursor may name any other).
  const t = startTime.getTime();
  if (!id || !/^[0-9a-f-]{36}$/i.test(id) || Number.isNaN(t) || t < -62135596800000 || t > 253402300799999) {
    throw new HangarError('validation_failed', 'cursor: not a cursor returned by this endpoint', {
      issues: [{ loc: ['query', 'cursor'], msg: 'not a cursor returned by this endpoint', type: 'value_error' }],
    });
  }
  return { startTime, id };
}
