// The Kubernetes driver's apply path where no cluster is reachable (as on this machine): an
// external_docker deployment is accepted, and its revision fails clearly instead of hanging.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { waitFor } from './git-fixture.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    env: { HANGAR_DEPLOY_POLL_MS: '300', HANGAR_DEPLOY_DRIVERS: 'external_docker=kubernetes', HANGAR_KUBECONFIG: '/nonexistent/kubeconfig' },
  });
});
afterAll(async () => {
  await server?.close();
});

describe('kubernetes driver without a cluster', () => {
  it('fails the revision with DEPLOY_FAILED and a message, and the deployment stays UNUSED', async () => {
    const res = await server.client.POST('/v2/deployments', {
      body: {
        name: 'k8s-app',
        source: 'external_docker',
        source_config: { listener_config: { k8s_namespace: 'agents' }, resource_spec: { min_scale: 1, max_scale: 2 } },
        source_revision_config: { image_uri: 'registry.example.com/acme/app:1.0' },
        secrets: [],
      },
    });
    expect(res.response.status).toBe(201);
    const d = res.data!;
    const rev = await waitFor('the revision to fail', async () => {
      const r = await server.client.GET('/v2/deployments/{deployment_id}/revisions/{revision_id}', { params: { path: { deployment_id: d.id, revision_id: d.latest_revision_id! } } });
      return r.data!.status === 'DEPLOY_FAILED' ? r.data! : undefined;
    });
    expect(rev.status_message).toMatch(/Kubernetes client cannot load|no Kubernetes cluster|ENOENT|nonexistent/);
    const after = await server.client.GET('/v2/deployments/{deployment_id}', { params: { path: { deployment_id: d.id } } });
    expect(after.data!.status).toBe('UNUSED');
    // A source no driver is configured for on this server is refused at create.
    const vcs = await server.client.POST('/v2/deployments', {
      body: { name: 'vcs', source: 'vcshost', source_config: { repo_url: 'https://git.example.com/a.git' }, source_revision_config: { repo_ref: 'main' }, secrets: [] },
    });
    expect(vcs.response.status).toBe(422);
    expect(vcs.error).toEqual({ detail: [{ loc: ['body', 'source'], msg: 'no configured driver serves source "vcshost" on this server (see HANGAR_DEPLOY_DRIVERS)', type: 'value_error' }] });
  });
});
