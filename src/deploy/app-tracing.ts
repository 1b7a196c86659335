// Traces of a deployed application go to the deployment's tracing project in Hangar: the app gets
// the LangSmith environment pointing at Hangar's LangSmith-compatible ingestion, with an API key
// minted for that running revision and revoked when it stops.
import type { Db } from '../db/index.js';
import type { WorkspaceService } from '../core/workspaces/service.js';
import type { DriverTarget } from './driver.js';

/** Environment that sends an application's traces somewhere, and how to take it back. */
export interface AppTraceEnv {
  env: Record<string, string>;
  release(): Promise<void>;
}

/** Gives a running revision its tracing environment. */
export interface AppTracing {
  envFor(target: DriverTarget): Promise<AppTraceEnv>;
}

/** Tracing into Hangar's own trace store, project = deployment name. */
export function hangarAppTracing(o: { db: Db; workspaces: WorkspaceService; publicUrl: () => string }): AppTracing {
  return {
    async envFor(t) {
      const ws = await o.db.selectFrom('workspaces').select('name').where('id', '=', t.deployment.workspaceId).executeTakeFirstOrThrow();
      const principal = `deployment:${t.deployment.id}/revision:${t.revision.id}`;
      // A key minted by a previous host of this revision that could not revoke it (it stopped
      // with the database, or crashed) is revoked now.
      await o.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('principal', '=', principal).where('revoked_at', 'is', null).execute();
      const { key, record } = await o.workspaces.createKey({
        workspace: ws.name,
        // Least privilege: the app can send traces to its own project and do nothing else.
        role: 'member',
        tracesProject: t.deployment.name,
        principal,
        description: `traces of deployment ${t.deployment.name}, revision ${t.revision.seq}`,
      });
      return {
        env: {
          LANGSMITH_TRACING: 'true',
          LANGSMITH_ENDPOINT: `${o.publicUrl()}/langsmith`,
          LANGSMITH_API_KEY: key,
          LANGSMITH_PROJECT: t.deployment.name,
        },
        release: async () => {
          await o.workspaces.revokeKey(record.id);
        },
      };
    },
  };
}
