// Calling the deployments API of a test server as its admin, with the answer's status and parsed body.
import type { TestServer } from '../support/server.js';
import { waitFor } from './git-fixture.js';

/** `method p` with `body` (JSON, or a Buffer sent as `type`); the status and the parsed body (null when empty). */
export async function apiCall(server: TestServer, method: string, p: string, body?: unknown, type = 'application/json'): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${p}`, {
    method,
    headers: { 'X-Api-Key': server.adminKey, 'Content-Type': type },
    ...(body === undefined ? {} : { body: body instanceof Buffer ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/**
 * Create a deployment of the git repository at `sourceConfig.repo_url` (branch `main`) and wait for
 * its first revision to settle; its id, the revision's final status and its build log.
 */
export async function deployRepo(server: TestServer, name: string, sourceConfig: Record<string, unknown>): Promise<{ id: string; status: string; logs: string }> {
  const api = async (method: string, p: string, body?: unknown) => (await apiCall(server, method, p, body)).body;
  const d = await api('POST', '/v2/deployments', { name, source: 'vcshost', source_config: sourceConfig, source_revision_config: { repo_ref: 'main' }, secrets: [] });
  const rev = d.latest_revision_id as string;
  const status = await waitFor('the revision to deploy', async () => {
    const s = (await api('GET', `/v2/deployments/${d.id}/revisions/${rev}`)).status as string;
    return ['DEPLOYED', 'BUILD_FAILED', 'DEPLOY_FAILED'].includes(s) ? s : undefined;
  });
  const logs = (await api('GET', `/v2/deployments/${d.id}/revisions/${rev}/build-logs`)).logs as string;
  return { id: d.id as string, status, logs };
}
