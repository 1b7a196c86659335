// The reconciler's queries: claiming revisions under a lease (FOR UPDATE SKIP LOCKED), guarded
// status transitions checked against the one transition table, lease renewal, and logs.
import { sql, type Selectable } from 'kysely';
import { canTransition, IN_PROGRESS_REVISION_STATUSES, sourcesOf, type DeploymentStatus, type RevisionStatus } from '../core/deployments/status.js';
import type { Db } from '../db/index.js';
import type { DeploymentRevisionsTable, DeploymentsTable } from '../db/tables/deployments.js';

/** A claimed revision row. */
export type RevisionRow = Selectable<DeploymentRevisionsTable>;
/** A deployment row. */
export type DeploymentRowT = Selectable<DeploymentsTable>;

/** Lost the revision: its status or claim changed under us (superseded, interrupted, lease expired). */
export class LostRevision extends Error {
  override name = 'LostRevision';
}

/** Queries of one reconciler process (`owner` identifies it in claims). */
export class ReconcilerStore {
  constructor(
    private readonly db: Db,
    readonly owner: string,
    private readonly leaseMs: number,
  ) {}

  /**
   * Claim one revision with work to do for `drivers`: an in-progress revision, or (for drivers
   * that host processes) an active DEPLOYED revision nobody hosts. Oldest first; never one of
   * `held` (those this process works on or hosts).
   */
  async claimRevision(drivers: string[], hostingDrivers: string[], held: string[] = []): Promise<RevisionRow | undefined> {
    if (drivers.length === 0) return undefined;
    const result = await sql<RevisionRow>`
      UPDATE deployment_revisions r
         SET claimed_by = ${this.owner}, lease_expires_at = now() + ${`${this.leaseMs} milliseconds`}::interval,
             attempts = r.attempts + 1, updated_at = now()
       WHERE r.id = (
         SELECT r2.id FROM deployment_revisions r2 JOIN deployments d ON d.id = r2.deployment_id
          WHERE d.status <> 'AWAITING_DELETE'
            AND d.driver = ANY(${drivers}::text[])
            AND (r2.lease_expires_at IS NULL OR r2.lease_expires_at < now())
            -- Never one this process is still working on: a renewal that came late let its lease
            -- lapse, and claiming it again would drive it twice here.
            AND NOT (r2.id = ANY(${held}::uuid[]))
            AND (r2.status = ANY(${[...IN_PROGRESS_REVISION_STATUSES]}::text[])
                 OR (r2.status = 'DEPLOYED' AND d.active_revision_id = r2.id AND d.driver = ANY(${hostingDrivers}::text[])))
            -- One deploy at a time per deployment: a revision waits while an older one is deploying.
            AND NOT (r2.status = 'AWAITING_DEPLOY' AND EXISTS (
                  SELECT 1 FROM deployment_revisions o WHERE o.deployment_id = r2.deployment_id AND o.status = 'DEPLOYING' AND o.id <> r2.id))
          ORDER BY r2.created_at
          FOR UPDATE OF r2 SKIP LOCKED
          LIMIT 1)
      RETURNING r.*`.execute(this.db);
    return result.rows[0];
  }

  /**
   * Move a revision we hold from `from` to `to`; throws LostRevision when it is no longer in `from`
   * under our claim. Every status change of the reconciler goes through here.
   */
  async transition(id: string, from: RevisionStatus, to: RevisionStatus, extra: { failure_reason?: string | null; repo_commit_sha?: string | null; runtime_url?: string | null; image_version?: string | null } = {}): Promise<void> {
    if (!canTransition(from, to)) throw new Error(`revision transition ${from} → ${to} is not in the transition table`);
    const row = await this.db
      .updateTable('deployment_revisions')
      .set({ status: to, updated_at: new Date(), ...extra })
      .where('id', '=', id)
      .where('status', '=', from)
      .where('claimed_by', '=', this.owner)
      .returning('id')
      .executeTakeFirst();
    if (!row) throw new LostRevision(`revision ${id} is no longer ${from} under this reconciler`);
  }

  /**
   * AWAITING_DEPLOY → DEPLOYING, unless another revision of the deployment is DEPLOYING: one deploy
   * at a time per deployment (two would apply their objects over each other, and the one applied
   * last would run whichever became active). Checked under the deployment's row lock, so two
   * processes cannot both start. Returns the number of the revision deploying instead, or undefined
   * once this one is DEPLOYING; throws LostRevision when it is no longer ours.
   */
  async startDeploying(id: string, deploymentId: string): Promise<number | undefined> {
    return this.db.transaction().execute(async (trx) => {
      await trx.selectFrom('deployments').select('id').where('id', '=', deploymentId).forUpdate().executeTakeFirst();
      const other = await trx.selectFrom('deployment_revisions').select('seq').where('deployment_id', '=', deploymentId).where('status', '=', 'DEPLOYING').where('id', '<>', id).executeTakeFirst();
      if (other) return other.seq;
      const row = await trx
        .updateTable('deployment_revisions')
        .set({ status: 'DEPLOYING', updated_at: new Date() })
        .where('id', '=', id)
        .where('status', '=', 'AWAITING_DEPLOY')
        .where('claimed_by', '=', this.owner)
        .returning('id')
        .executeTakeFirst();
      if (!row) throw new LostRevision(`revision ${id} is no longer AWAITING_DEPLOY under this reconciler`);
      return undefined;
    });
  }

  /** Move every revision of a deployment that can become `to` (used for INTERRUPTED on deletion). */
  async transitionAll(deploymentId: string, to: RevisionStatus, reason: string): Promise<string[]> {
    const rows = await this.db
      .updateTable('deployment_revisions')
      .set({ status: to, failure_reason: reason, updated_at: new Date() })
      .where('deployment_id', '=', deploymentId)
      .where('status', 'in', sourcesOf(to))
      .returning('id')
      .execute();
    return rows.map((r) => r.id);
  }

  /** Renew our leases; returns the revisions we may keep working on (others were taken from us or ended). */
  async renew(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await sql<{ id: string }>`
      UPDATE deployment_revisions r SET lease_expires_at = now() + ${`${this.leaseMs} milliseconds`}::interval
        FROM deployments d
       WHERE r.id = ANY(${ids}::uuid[]) AND r.claimed_by = ${this.owner} AND d.id = r.deployment_id
         AND d.status <> 'AWAITING_DELETE'
         AND (r.status = ANY(${[...IN_PROGRESS_REVISION_STATUSES]}::text[]) OR (r.status = 'DEPLOYED' AND d.active_revision_id = r.id))
      RETURNING r.id`.execute(this.db);
    return new Set(rows.rows.map((r) => r.id));
  }

  /** Why a revision we held is no longer ours (for its log): deleted, superseded, interrupted or taken over. */
  async whyLost(id: string): Promise<string> {
    const row = await this.db
      .selectFrom('deployment_revisions as r')
      .leftJoin('deployments as d', 'd.id', 'r.deployment_id')
      .select(['r.status', 'r.failure_reason', 'r.claimed_by', 'd.status as deployment_status'])
      .where('r.id', '=', id)
      .executeTakeFirst();
    if (!row || !row.deployment_status || row.deployment_status === 'AWAITING_DELETE') return 'its deployment was deleted';
    if ((row.status === 'SKIPPED' || row.status === 'INTERRUPTED') && row.failure_reason) return row.failure_reason;
    if (row.claimed_by !== this.owner) return 'another process took the revision over (this one could not renew its lease in time)';
    return `the revision is ${row.status} now`;
  }

  /** Which of `ids` are deployments that exist and are not being deleted. */
  async liveDeployments(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.selectFrom('deployments').select('id').where('id', 'in', ids).where('status', '<>', 'AWAITING_DELETE').execute();
    return new Set(rows.map((r) => r.id));
  }

  /** Give up our claim (shutdown, or the revision needs no more of us). */
  async release(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.updateTable('deployment_revisions').set({ claimed_by: null, lease_expires_at: null }).where('id', 'in', ids).where('claimed_by', '=', this.owner).execute();
  }

  /** Append text to a revision's build or deploy log (the last 512 KiB are kept). */
  async appendLog(id: string, kind: 'build' | 'deploy', text: string): Promise<void> {
    const column = kind === 'build' ? sql.ref('build_log') : sql.ref('deploy_log');
    await sql`UPDATE deployment_revisions SET ${column} = right(${column} || ${text}, 524288) WHERE id = ${id}`.execute(this.db);
  }

  /** Record where a hosted revision answers now (after a restart on another port). */
  async setRuntimeUrl(id: string, url: string | null): Promise<void> {
    await this.db.updateTable('deployment_revisions').set({ runtime_url: url }).where('id', '=', id).where('claimed_by', '=', this.owner).execute();
  }

  async deployment(id: string): Promise<DeploymentRowT | undefined> {
    return this.db.selectFrom('deployments').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Set the deployment status while its first revision deploys (nothing active yet). */
  async markAwaitingDatabase(deploymentId: string): Promise<void> {
    await this.db
      .updateTable('deployments')
      .set({ status: 'AWAITING_DATABASE', updated_at: new Date() })
      .where('id', '=', deploymentId)
      .where('active_revision_id', 'is', null)
      .where('status', '<>', 'AWAITING_DELETE')
      .execute();
  }

  /**
   * Make a healthy DEPLOYING revision DEPLOYED and the active one, in one transaction with the
   * replaced revision becoming INTERRUPTED, so readers never see two DEPLOYED revisions or a
   * DEPLOYED one that is not active. When a newer revision is already active, this one is
   * INTERRUPTED instead and undefined is returned; otherwise the previously active revision id.
   */
  async activate(r: { deploymentId: string; revisionId: string; seq: number; runtimeUrl: string | null; imageVersion: string | null; customUrl: string | null }): Promise<{ previous: string | null } | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const d = await trx.selectFrom('deployments').selectAll().where('id', '=', r.deploymentId).forUpdate().executeTakeFirst();
      if (!d || d.status === 'AWAITING_DELETE') return undefined;
      let newer: number | undefined;
      if (d.active_revision_id) {
        const active = await trx.selectFrom('deployment_revisions').select('seq').where('id', '=', d.active_revision_id).executeTakeFirst();
        if (active && active.seq > r.seq) newer = active.seq;
      }
      const to: RevisionStatus = newer === undefined ? 'DEPLOYED' : 'INTERRUPTED';
      const moved = await trx
        .updateTable('deployment_revisions')
        .set({
          status: to,
          updated_at: new Date(),
          ...(newer === undefined ? { runtime_url: r.runtimeUrl, image_version: r.imageVersion } : { failure_reason: `revision ${newer} was already serving; this one never served` }),
        })
        .where('id', '=', r.revisionId)
        .where('status', '=', 'DEPLOYING')
        .where('claimed_by', '=', this.owner)
        .returning('id')
        .executeTakeFirst();
      if (!moved) throw new LostRevision(`revision ${r.revisionId} is no longer DEPLOYING under this reconciler`);
      if (newer !== undefined) return undefined;
      const sourceConfig = d.source_config as Record<string, unknown>;
      const next = r.customUrl && !sourceConfig.custom_url ? { ...sourceConfig, custom_url: r.customUrl } : sourceConfig;
      await trx
        .updateTable('deployments')
        .set({
          active_revision_id: r.revisionId,
          status: 'READY',
          image_version: r.imageVersion,
          remote_reconciled: d.latest_revision_id === r.revisionId,
          source_config: JSON.stringify(next),
          updated_at: new Date(),
        })
        .where('id', '=', r.deploymentId)
        .execute();
      const previous = d.active_revision_id === r.revisionId ? null : d.active_revision_id;
      // In the same transaction: the replaced revision says it no longer serves. Exactly one
      // revision of a deployment is DEPLOYED, and it is active_revision_id.
      await trx
        .updateTable('deployment_revisions')
        .set({ status: 'INTERRUPTED', failure_reason: `replaced by revision ${r.seq}; no longer serving`, runtime_url: null, updated_at: new Date() })
        .where('deployment_id', '=', r.deploymentId)
        .where('id', '<>', r.revisionId)
        .where('status', '=', 'DEPLOYED')
        .execute();
      return { previous };
    });
  }

  /**
   * Fail a revision and settle its deployment in one statement: READY if something still serves,
   * else UNUSED; UNKNOWN when `nothingServes` (the active revision stopped for the switch-over and did
   * not start again). (Two statements let a reader see the failed revision beside a deployment still
   * AWAITING_DATABASE.)
   */
  async fail(id: string, from: RevisionStatus, to: RevisionStatus, reason: string, nothingServes = false): Promise<void> {
    if (!canTransition(from, to)) throw new Error(`revision transition ${from} → ${to} is not in the transition table`);
    const res = await sql<{ n: number }>`
      WITH r AS (
        UPDATE deployment_revisions SET status = ${to}, failure_reason = ${reason}, updated_at = now()
         WHERE id = ${id} AND status = ${from} AND claimed_by = ${this.owner}
        RETURNING deployment_id),
      d AS (
        UPDATE deployments SET status = CASE WHEN active_revision_id IS NULL THEN 'UNUSED' WHEN ${nothingServes}::boolean THEN 'UNKNOWN' ELSE 'READY' END,
               remote_reconciled = false, updated_at = now()
         WHERE id IN (SELECT deployment_id FROM r) AND status <> 'AWAITING_DELETE'
        RETURNING id)
      SELECT count(*)::int AS n FROM r`.execute(this.db);
    if (!res.rows[0]?.n) throw new LostRevision(`revision ${id} is no longer ${from} under this reconciler`);
  }

  /** Set a deployment's status (for UNKNOWN when a hosted revision cannot be restarted). */
  async setDeploymentStatus(deploymentId: string, status: DeploymentStatus): Promise<void> {
    await this.db.updateTable('deployments').set({ status, updated_at: new Date() }).where('id', '=', deploymentId).where('status', '<>', 'AWAITING_DELETE').execute();
  }

  /** Claim one deployment awaiting deletion. */
  async claimDeletion(): Promise<DeploymentRowT | undefined> {
    const result = await sql<DeploymentRowT>`
      UPDATE deployments d SET claimed_by = ${this.owner}, lease_expires_at = now() + ${`${this.leaseMs} milliseconds`}::interval
       WHERE d.id = (SELECT id FROM deployments WHERE status = 'AWAITING_DELETE'
                       AND (lease_expires_at IS NULL OR lease_expires_at < now())
                     ORDER BY updated_at FOR UPDATE SKIP LOCKED LIMIT 1)
      RETURNING d.*`.execute(this.db);
    return result.rows[0];
  }

  /** Whether another live process still holds a revision of the deployment. */
  async heldElsewhere(deploymentId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('deployment_revisions')
      .select('id')
      .where('deployment_id', '=', deploymentId)
      .where('claimed_by', 'is not', null)
      .where('claimed_by', '<>', this.owner)
      .where('lease_expires_at', '>', new Date())
      .executeTakeFirst();
    return row !== undefined;
  }

  async releaseDeletion(deploymentId: string): Promise<void> {
    await this.db.updateTable('deployments').set({ claimed_by: null, lease_expires_at: null }).where('id', '=', deploymentId).where('claimed_by', '=', this.owner).execute();
  }

  async removeDeployment(deploymentId: string): Promise<void> {
    await this.db.deleteFrom('deployments').where('id', '=', deploymentId).where('status', '=', 'AWAITING_DELETE').execute();
  }
}
