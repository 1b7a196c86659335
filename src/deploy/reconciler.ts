// The reconciler: claims revisions under a lease and drives them through the revision state
// machine with the driver configured for their deployment; tears deleted deployments down.
// Several processes can run it on one database: FOR UPDATE SKIP LOCKED + the lease make each
// revision worked on by exactly one of them, and an expired lease hands it over.
import { randomUUID } from 'node:crypto';
import { stripVTControlCharacters } from 'node:util';
import type { DeploymentSecret, ResourceSpec, SecretReference, Source, SourceConfig, SourceRevisionConfig } from '../core/deployments/types.js';
import type { Cipher } from '../core/secrets/cipher.js';
import type { Db } from '../db/index.js';
import type { Logger } from '../logging.js';
import type { RevisionStatus } from '../core/deployments/status.js';
import { abortReason, NothingServes, type Driver, type DriverContext, type DriverTarget } from './driver.js';
import { Redactor } from '../tracing/redact.js';
import { CleanRedactingStream } from './log-stream.js';
import { LostRevision, ReconcilerStore, type DeploymentRowT, type RevisionRow } from './store.js';

/** Settings of a reconciler. */
export interface ReconcilerOptions {
  db: Db;
  cipher: Cipher;
  logger: Logger;
  drivers: Driver[];
  leaseMs: number;
  pollMs: number;
  /** Revisions worked on at once by this process (hosted revisions do not count). */
  concurrency?: number;
  /** Base URL clients reach this server at (for the stable URL of locally run deployments). */
  publicUrl: () => string;
  /** Run once when the reconciler starts (the Kubernetes policy check of running deployments). */
  onStart?: () => Promise<unknown>;
}

/** Claims of one revision before the reconciler gives up on it (each lost process or unexpected error is one). */
export const MAX_ATTEMPTS = 5;

/** Where a revision that the reconciler gives up on ends, by the status it was in. */
const GIVE_UP: Partial<Record<RevisionStatus, RevisionStatus>> = {
  CREATING: 'CREATE_FAILED',
  QUEUED: 'BUILD_FAILED',
  AWAITING_BUILD: 'BUILD_FAILED',
  BUILDING: 'BUILD_FAILED',
  AWAITING_DEPLOY: 'DEPLOY_FAILED',
  DEPLOYING: 'DEPLOY_FAILED',
};

interface Held {
  row: RevisionRow;
  abort: AbortController;
  /** Hosting a running revision (not working on it). */
  hosting: boolean;
  /** The work on it, settled once it has stopped (a deletion waits for it before tearing down). */
  done?: Promise<void>;
}

/** Drives deployment revisions; a BackgroundTask of the server. */
export class Reconciler {
  readonly name = 'deployment-reconciler';
  readonly store: ReconcilerStore;
  private readonly held = new Map<string, Held>();
  private readonly drivers: Map<string, Driver>;
  private timer: NodeJS.Timeout | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private renewing = false;
  private readonly work = new Set<Promise<void>>();
  /** Per deployment: revisions let go of whose work has not stopped yet. */
  private readonly stopping = new Map<string, Set<Promise<void>>>();

  constructor(private readonly o: ReconcilerOptions) {
    this.store = new ReconcilerStore(o.db, `reconciler-${randomUUID()}`, o.leaseMs);
    this.drivers = new Map(o.drivers.map((d) => [d.name, d]));
  }

  start(): void {
    this.timer = setInterval(() => this.nudge(), this.o.pollMs);
    this.renewTimer = setInterval(() => void this.renewLeases(), Math.max(200, Math.floor(this.o.leaseMs / 3)));
    this.nudge();
    void this.o.onStart?.().catch((error: unknown) => this.o.logger.warn({ err: error }, 'the start-up check of deployments failed'));
  }

  /**
   * A deployment changed through this process (created, changed, deleted): look for work now, and
   * check at once whether what this process works on was superseded or deleted (a build of it is
   * then stopped now, not at the next lease renewal).
   */
  changed(): void {
    this.nudge();
    void this.renewLeases();
  }

  /** Look for work now. */
  nudge(): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = this.tick()
      .catch((error) => this.o.logger.error({ err: error }, 'reconciler tick failed'))
      .finally(() => {
        this.ticking = undefined;
        if (this.again) {
          this.again = false;
          this.nudge();
        }
      });
  }

  /** Stop: abort current work, stop hosted processes, and release every claim so another process resumes at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.renewTimer);
    await this.ticking;
    for (const h of this.held.values()) h.abort.abort(new Error('server stopping'));
    await Promise.allSettled([...this.work]);
    await Promise.allSettled([...this.stopping.values()].flatMap((set) => [...set]));
    // The revisions this process hosts stop answering now: their deployments are not READY until
    // another process (or this one, restarted) starts them again.
    const hosted = [...this.held.values()].filter((h) => h.hosting).map((h) => h.row.deployment_id);
    await Promise.allSettled(hosted.map((id) => this.store.setDeploymentStatus(id, 'UNKNOWN')));
    await Promise.allSettled(this.o.drivers.map((d) => d.close()));
    await this.store.release([...this.held.keys()]).catch(() => {});
    this.held.clear();
  }

  private async tick(): Promise<void> {
    await this.deletions();
    await this.forgetDeleted();
    const names = [...this.drivers.keys()];
    const hosting = this.o.drivers.filter((d) => d.hostsProcesses).map((d) => d.name);
    const limit = this.o.concurrency ?? 4;
    while (!this.stopped && [...this.held.values()].filter((h) => !h.hosting).length < limit) {
      const row = await this.store.claimRevision(names, hosting, [...this.held.keys()]);
      if (!row) break;
      const held: Held = { row, abort: new AbortController(), hosting: row.status === 'DEPLOYED' };
      this.held.set(row.id, held);
      const p = this.drive(held).finally(() => this.work.delete(p));
      held.done = p;
      this.work.add(p);
    }
  }

  private async renewLeases(): Promise<void> {
    // One renewal at a time: while the database is slow, renewals piling up would take every
    // connection of the pool.
    if (this.stopped || this.held.size === 0 || this.renewing) return;
    this.renewing = true;
    try {
      // Only what was held when the renewal was sent: a revision claimed while it ran is not in
      // its answer, and must not be taken for one that was lost (stopping it mid-rollout left the
      // deployment's front with nothing to serve).
      const sent = [...this.held];
      let lost = false;
      const keep = await this.store.renew(sent.map(([id]) => id));
      for (const [id, h] of sent) {
        if (keep.has(id) || this.held.get(id) !== h) continue;
        // Superseded, interrupted, deleted, or taken over after our lease lapsed: stop working on it.
        const why = await this.store.whyLost(id).catch(() => 'the revision changed under this reconciler');
        // A deletion here took it meanwhile (and stops it itself).
        if (this.held.get(id) !== h) continue;
        h.abort.abort(new LostRevision(why));
        this.held.delete(id);
        // The claim is given up once the work has stopped (a request to the cluster in flight ends
        // first), without holding up the renewal of the others: a deletion, here or in another
        // process, tears down only after that. Registered in the same turn as the revision leaves
        // `held` (no await between): a deletion that looks in between would find it in neither and
        // tear down under an apply still in flight.
        this.whileStopping(
          h.row.deployment_id,
          (async () => {
            await h.done?.catch(() => {});
            const driver = await this.driverOf(h.row.deployment_id);
            await driver?.stop(h.row.deployment_id, id);
            await this.store.release([id]);
          })(),
        );
        // If its deployment was deleted (through another process too), the next tick removes its
        // front and directory here (forgetDeleted).
        lost = true;
      }
      if (lost) this.nudge();
    } catch (error) {
      this.o.logger.warn({ err: error }, 'could not renew deployment leases');
    } finally {
      this.renewing = false;
    }
  }

  /** Work on a deployment's revision that is stopping; a deletion of the deployment waits for it. */
  private whileStopping(deploymentId: string, p: Promise<void>): void {
    const set = this.stopping.get(deploymentId) ?? new Set();
    this.stopping.set(deploymentId, set);
    const tracked = p
      .catch((error: unknown) => this.o.logger.warn({ err: error, deployment_id: deploymentId }, 'stopping a revision that is no longer ours failed'))
      .finally(() => {
        set.delete(tracked);
        if (set.size === 0 && this.stopping.get(deploymentId) === set) this.stopping.delete(deploymentId);
      });
    set.add(tracked);
  }

  /**
   * Remove what this process keeps (front port, directories) of deployments deleted through another
   * process: the process that tears a deployment down can only remove what is on its own host.
   */
  private async forgetDeleted(): Promise<void> {
    for (const driver of this.o.drivers) {
      if (!driver.localDeployments || !driver.forget) continue;
      const busy = new Set([...this.held.values()].map((h) => h.row.deployment_id));
      const local = (await driver.localDeployments()).filter((id) => !busy.has(id));
      if (local.length === 0) continue;
      const alive = await this.store.liveDeployments(local);
      for (const id of local) {
        if (alive.has(id)) continue;
        await driver.forget(id);
        this.o.logger.info({ deployment_id: id }, 'deployment deleted through another process: removed what this process kept of it');
      }
    }
  }

  private async driverOf(deploymentId: string): Promise<Driver | undefined> {
    const d = await this.store.deployment(deploymentId);
    return d ? this.drivers.get(d.driver) : undefined;
  }

  /** Work on one claimed revision until it needs nothing more from this process. */
  private async drive(held: Held): Promise<void> {
    const { row } = held;
    const log = this.o.logger.child({ deployment_id: row.deployment_id, revision_id: row.id });
    let keepHosting = false;
    let releaseNow = true;
    try {
      const giveUp = GIVE_UP[row.status as RevisionStatus];
      if (giveUp && row.attempts > MAX_ATTEMPTS) {
        await this.store.fail(row.id, row.status as RevisionStatus, giveUp, `gave up after ${MAX_ATTEMPTS} attempts; the server logs say why`);
        return;
      }
      const d = await this.store.deployment(row.deployment_id);
      if (!d) return;
      const driver = this.drivers.get(d.driver)!;
      const ctx = this.context(d, row, held.abort.signal);
      try {
        keepHosting = await new RevisionRun({ store: this.store, driver, ctx, row, deployment: d, logger: log, publicUrl: this.o.publicUrl }).run();
      } finally {
        ctx.flushLog('build');
        ctx.flushLog('deploy');
      }
    } catch (error) {
      if (!(error instanceof LostRevision) && !held.abort.signal.aborted) {
        log.error({ err: error, attempt: row.attempts }, 'reconciling a revision failed; it is retried when its lease expires');
        // Keeping the claim until the lease expires spaces the retries out.
        releaseNow = false;
      }
    } finally {
      if (keepHosting && !held.abort.signal.aborted) {
        held.hosting = true;
      } else if (this.held.get(row.id) === held) {
        this.held.delete(row.id);
        // Also on shutdown: the next process resumes the revision at once instead of after the lease.
        if (releaseNow) await this.store.release([row.id]).catch(() => {});
      }
    }
    if (!this.stopped) this.nudge();
  }

  private context(d: DeploymentRowT, row: RevisionRow, signal: AbortSignal): RunContext {
    const target: DriverTarget = {
      deployment: {
        id: d.id,
        workspaceId: d.workspace_id,
        name: d.name,
        source: d.source as Source,
        sourceConfig: d.source_config as SourceConfig,
        secretReferences: d.secret_references as SecretReference[] | null,
      },
      revision: {
        id: row.id,
        seq: row.seq,
        sourceRevisionConfig: row.source_revision_config as SourceRevisionConfig,
        resourceSpec: row.resource_spec as ResourceSpec | null,
        secrets: this.o.cipher.decryptJson<DeploymentSecret[]>(row.secrets_encrypted),
      },
    };
    // Log writes are chained so they land in order; a failed write is not worth failing a build.
    let chain: Promise<void> = Promise.resolve();
    const lines = { build: new LogLines(), deploy: new LogLines() };
    // The logs are read by viewers, and the API masks secrets everywhere else: an application
    // printing its environment must not show them here either.
    // Output comes in pieces: a secret split across two of them is redacted too (the end of a piece
    // that could begin one waits for the next piece of the same stream, or for the stream to end).
    // Each stream of output (a process's stdout, its stderr, Hangar's own messages) is redacted on
    // its own, so what another stream writes between the two halves does not separate them.
    const values = target.revision.secrets.map((s) => s.value);
    const redactor = new Redactor(values);
    const own = { build: new CleanRedactingStream(values), deploy: new CleanRedactingStream(values) };
    const append = (kind: 'build' | 'deploy', text: string) => {
      const out = lines[kind].format(text);
      if (out) chain = chain.then(() => this.store.appendLog(row.id, kind, out)).catch(() => {});
    };
    return {
      ...target,
      log: (kind, text) => append(kind, own[kind].write(text)),
      stream: (kind) => {
        const hide = new CleanRedactingStream(values);
        let ended = false;
        return {
          write: (text) => {
            if (!ended) append(kind, hide.write(text));
          },
          end: () => {
            if (!ended) append(kind, hide.end());
            ended = true;
          },
        };
      },
      flushLog: (kind) => append(kind, own[kind].end()),
      redact: (text) => redactor.string(text),
      signal,
    };
  }

  /** Tear down deployments awaiting deletion, once no other process still runs one of their revisions. */
  private async deletions(): Promise<void> {
    for (;;) {
      const d = await this.store.claimDeletion();
      if (!d) return;
      const interrupted = await this.store.transitionAll(d.id, 'INTERRUPTED', 'its deployment was deleted');
      const driver = this.drivers.get(d.driver);
      for (const [id, h] of this.held) {
        if (h.row.deployment_id !== d.id) continue;
        h.abort.abort(new LostRevision('its deployment was deleted'));
        this.held.delete(id);
        // Let the work on it stop first: a deploy that was mid-apply must not apply more objects
        // after the teardown has removed them.
        await h.done?.catch(() => {});
        await driver?.stop(d.id, id);
        await this.store.release([id]);
      }
      // And the revisions a lease renewal let go of (it saw the deletion first).
      await Promise.all([...(this.stopping.get(d.id) ?? [])]);
      if (await this.store.heldElsewhere(d.id)) {
        // Another process still runs a revision; it notices at its next lease renewal and lets go.
        await this.store.releaseDeletion(d.id);
        this.o.logger.debug({ deployment_id: d.id, interrupted }, 'deletion waits for another process to stop its revision');
        return;
      }
      await driver?.teardown({ id: d.id, workspaceId: d.workspace_id, name: d.name, source: d.source as Source, sourceConfig: d.source_config as SourceConfig, secretReferences: d.secret_references as SecretReference[] | null });
      await this.store.removeDeployment(d.id);
      this.o.logger.info({ deployment_id: d.id }, 'deployment deleted');
    }
  }
}

/**
 * A driver's context, the end of a phase's own output (what the redaction held back is written), and
 * the redaction of text kept elsewhere (a failure's status_message).
 */
type RunContext = DriverContext & { flushLog(kind: 'build' | 'deploy'): void; redact(text: string): string };

/** One pass of a revision through the state machine, from whatever status it was claimed in. */
class RevisionRun {
  constructor(
    private readonly r: { store: ReconcilerStore; driver: Driver; ctx: RunContext; row: RevisionRow; deployment: DeploymentRowT; logger: Logger; publicUrl: () => string },
  ) {}

  /** Returns true when this process now hosts the revision (it keeps the claim). */
  async run(): Promise<boolean> {
    const { store, row } = this.r;
    const id = row.id;
    switch (row.status) {
      case 'CREATING':
        await store.transition(id, 'CREATING', 'QUEUED');
      // falls through
      case 'QUEUED':
        await store.transition(id, 'QUEUED', 'AWAITING_BUILD');
      // falls through
      case 'AWAITING_BUILD':
        await this.build();
      // falls through
      case 'AWAITING_DEPLOY':
        return this.deploy();
      case 'BUILDING':
        // The process building it went away: build again from the start.
        this.r.ctx.log('build', `\n[hangar] the previous build attempt was lost (attempt ${row.attempts}); building again\n`);
        await store.transition(id, 'BUILDING', 'AWAITING_BUILD');
        await this.build();
        return this.deploy();
      case 'DEPLOYING':
        this.r.ctx.log('deploy', `\n[hangar] the previous deploy attempt was lost (attempt ${row.attempts}); deploying again\n`);
        await store.transition(id, 'DEPLOYING', 'AWAITING_DEPLOY');
        return this.deploy();
      case 'DEPLOYED':
        return this.host();
      default:
        return false;
    }
  }

  private async build(): Promise<void> {
    const { store, row, driver, ctx } = this.r;
    await store.transition(row.id, 'AWAITING_BUILD', 'BUILDING');
    let sha: string | null = null;
    try {
      sha = (await driver.build(ctx)).commitSha ?? null;
      ctx.flushLog('build');
    } catch (error) {
      ctx.flushLog('build');
      if (ctx.signal.aborted) {
        // The step running was stopped (its process group: SIGTERM, then SIGKILL) and no later one started.
        ctx.log('build', `\n[hangar] build stopped: ${abortReason(ctx.signal)}\n`);
        throw new LostRevision('aborted');
      }
      const reason = ctx.redact(message(error));
      ctx.log('build', `\n[hangar] build failed: ${reason}\n`);
      await store.fail(row.id, 'BUILDING', 'BUILD_FAILED', reason);
      throw new LostRevision('build failed');
    }
    await store.transition(row.id, 'BUILDING', 'AWAITING_DEPLOY', { repo_commit_sha: sha });
  }

  private async deploy(): Promise<boolean> {
    const { store, row, driver, ctx } = this.r;
    // The deployment's database comes first (AWAITING_DATABASE until its first revision serves).
    await store.markAwaitingDatabase(row.deployment_id);
    // A revision claimed before its build goes on to deploy in the same pass: it too waits for an
    // older revision still deploying (let go of now, it is claimed again once that one is done).
    const deploying = await store.startDeploying(row.id, row.deployment_id);
    if (deploying !== undefined) {
      ctx.log('deploy', `[hangar] revision ${deploying} of this deployment is deploying; this one deploys after it\n`);
      return false;
    }
    let result;
    try {
      try {
        await driver.ensureDatabase(ctx);
      } catch (error) {
        throw new Error(`the deployment's database could not be created: ${message(error)}`, { cause: error });
      }
      result = await driver.deploy(ctx);
      // Switch-over: the previous revision drains and stops, this one takes over the database.
      await driver.promote(ctx);
    } catch (error) {
      await driver.stop(row.deployment_id, row.id);
      if (ctx.signal.aborted) throw new LostRevision('aborted');
      const reason = ctx.redact(message(error));
      ctx.log('deploy', `\n[hangar] deploy failed: ${reason}\n`);
      await store.fail(row.id, 'DEPLOYING', 'DEPLOY_FAILED', reason, error instanceof NothingServes);
      throw new LostRevision('deploy failed');
    }
    const activated = await store.activate({
      deploymentId: row.deployment_id,
      revisionId: row.id,
      seq: row.seq,
      runtimeUrl: result.runtimeUrl,
      imageVersion: result.imageVersion,
      customUrl: driver.hostsProcesses && this.r.publicUrl() ? `${this.r.publicUrl()}/v2/deployments/${row.deployment_id}/app` : null,
    });
    if (!activated) {
      await driver.stop(row.deployment_id, row.id);
      return false;
    }
    if (activated.previous) await driver.stop(row.deployment_id, activated.previous);
    this.r.logger.info({ previous: activated.previous }, 'revision deployed and active');
    return driver.hostsProcesses;
  }

  /** Start an active revision again in this process (its previous host went away). */
  private async host(): Promise<boolean> {
    const { store, row, driver, ctx } = this.r;
    ctx.log('deploy', `\n[hangar] starting the active revision again (its previous host went away)\n`);
    // Nothing answers until it is started again: not READY meanwhile.
    await store.setDeploymentStatus(row.deployment_id, 'UNKNOWN');
    try {
      const result = await driver.deploy(ctx);
      await driver.promote(ctx);
      await store.setRuntimeUrl(row.id, result.runtimeUrl);
      await store.setDeploymentStatus(row.deployment_id, 'READY');
      return true;
    } catch (error) {
      await driver.stop(row.deployment_id, row.id);
      if (ctx.signal.aborted) return false;
      ctx.log('deploy', `\n[hangar] could not start the active revision again: ${message(error)}\n`);
      await store.setDeploymentStatus(row.deployment_id, 'UNKNOWN');
      return false;
    }
  }
}

/**
 * Log text as stored: every line starts with its ISO timestamp, colour and cursor codes are removed
 * (node's stripVTControlCharacters) and carriage-return progress lines become lines. Output arrives
 * in chunks that may end mid-line; a line is stamped when it starts.
 */
export class LogLines {
  private atLineStart = true;

  format(text: string, now = new Date()): string {
    const clean = stripVTControlCharacters(text).replace(/\r\n?/g, '\n');
    if (!clean) return '';
    const stamp = `${now.toISOString()} `;
    let out = '';
    for (const ch of clean.split(/(?<=\n)/)) {
      // Blank lines carry nothing (messages start with one to begin on their own line).
      if (this.atLineStart && ch.trim() === '') continue;
      out += (this.atLineStart ? stamp : '') + ch;
      this.atLineStart = ch.endsWith('\n');
    }
    return out;
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
