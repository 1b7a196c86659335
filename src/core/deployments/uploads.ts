// Source tarballs for `internal_source`: an upload location is handed out, the tarball is PUT there,
// and its `source_tarball_path` names it in a deployment. Bytes are kept in PostgreSQL so any replica builds from them.
import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import { type Caller, requireWrite } from '../caller.js';
import { inBatches, retentionTask, type BackgroundTask } from '../../background.js';
import type { Logger } from '../../logging.js';
import { HangarError } from '../errors.js';
import { summarizeTarball, TARBALL_MAX_BYTES, TARBALL_MAX_ENTRIES, TarballRefused } from './tarball.js';

const SWEEP_BATCH = 500;

/** An upload location. */
export interface Upload {
  id: string;
  sourceTarballPath: string;
}

/** Hands out upload locations and stores the uploaded tarballs. */
export class UploadService {
  constructor(private readonly db: Db) {}

  async create(caller: Caller): Promise<Upload> {
    requireWrite(caller);
    const row = await this.db.insertInto('deployment_uploads').values({ workspace_id: caller.workspaceId }).returning('id').executeTakeFirstOrThrow();
    return { id: row.id, sourceTarballPath: `uploads/${row.id}.tar.gz` };
  }

  /**
   * Store the tarball of an upload (a gzip stream). It may be replaced until a revision is made
   * from it; after that it is what that revision (and a redeploy of it) builds, so it stays.
   */
  async put(caller: Caller, id: string, content: Buffer): Promise<Upload> {
    requireWrite(caller);
    if (content.length < 2 || content[0] !== 0x1f || content[1] !== 0x8b) {
      throw new HangarError('deployment_upload_invalid', 'the upload must be a gzip-compressed tarball (.tar.gz)');
    }
    // Read through before storing: a small upload must not unpack into gigabytes at build time.
    try {
      await summarizeTarball(content);
    } catch (error) {
      if (error instanceof TarballRefused) throw new HangarError('deployment_upload_invalid', `${error.message} (at most ${TARBALL_MAX_BYTES / 1024 / 1024} MiB in ${TARBALL_MAX_ENTRIES} entries)`);
      throw error;
    }
    const sourceTarballPath = `uploads/${id}.tar.gz`;
    const row = await this.db
      .updateTable('deployment_uploads')
      .set({ content, size_bytes: content.length, uploaded_at: new Date() })
      .where('workspace_id', '=', caller.workspaceId)
      .where('id', '=', id)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('deployment_revisions').select(sql<number>`1`.as('one')).where('workspace_id', '=', caller.workspaceId).where(sql<string>`source_revision_config->>'source_tarball_path'`, '=', sourceTarballPath))),
      )
      .returning('id')
      .executeTakeFirst();
    if (!row) {
      const exists = await this.db.selectFrom('deployment_uploads').select('id').where('workspace_id', '=', caller.workspaceId).where('id', '=', id).executeTakeFirst();
      if (!exists) throw new HangarError('deployment_upload_not_found', `no upload ${id} in this workspace`);
      throw new HangarError('deployment_upload_in_use', `a deployment revision was made from ${sourceTarballPath}; start a new upload (POST /v2/deployments/uploads) for other source`);
    }
    return { id, sourceTarballPath };
  }

  /**
   * Delete uploads no revision refers to that are older than `retentionHours` (counted from the
   * upload, or from its creation when nothing was uploaded), in batches; how many went. Rows being
   * referenced by a revision right now are locked by it (addRevision) and skipped.
   */
  sweep(retentionHours: number): Promise<number> {
    return inBatches(async () => {
      const deleted = await sql`
        DELETE FROM deployment_uploads WHERE id IN (
          SELECT u.id FROM deployment_uploads u
           WHERE coalesce(u.uploaded_at, u.created_at) < now() - make_interval(hours => ${retentionHours})
             AND NOT EXISTS (SELECT 1 FROM deployment_revisions r
                              WHERE r.workspace_id = u.workspace_id
                                AND r.source_revision_config->>'source_tarball_path' = 'uploads/' || u.id::text || '.tar.gz')
           LIMIT ${SWEEP_BATCH}
           FOR UPDATE SKIP LOCKED)`.execute(this.db);
      return Number(deleted.numAffectedRows ?? 0);
    });
  }

  /** The tarball bytes of an upload (for the driver). */
  async content(workspaceId: string, id: string): Promise<Buffer | undefined> {
    const row = await this.db.selectFrom('deployment_uploads').select('content').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    return row?.content ?? undefined;
  }
}

/**
 * The upload retention sweeper (HANGAR_DEPLOY_UPLOAD_RETENTION_HOURS): at start and hourly, uploads
 * no revision refers to and older than the retention are deleted, bytes and all (they live in the row).
 */
export function uploadSweeper(options: { uploads: UploadService; retentionHours: number; intervalMs?: number; logger: Logger }): BackgroundTask {
  return retentionTask({
    ...options,
    name: 'deployment-upload-sweeper',
    what: 'unreferenced deployment uploads',
    retentionDays: options.retentionHours / 24,
    sweep: () => options.uploads.sweep(options.retentionHours),
  });
}
