// Answers in the shapes the hosted product's published interface gives them, where a walk of that
// document, operation by operation, found Hangar's differing: tool-server deletes are idempotent,
// a server without OAuth carries no `oauth_mode` (never null), `permissions.shared_users` is declared
// and checked, and an agent's files in an answer always have their content.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const registerServer = async (name: string) => {
  const res = await server.client.POST('/v1/deepagents/mcp-servers', {
    body: { name, url: `https://${name}.example.com/mcp`, headers: [{ key: 'Authorization', value: 'Bearer not-used' }] },
  });
  expect(res.response.status).toBe(201);
  return res.data!;
};
const deleteServer = async (id: string) =>
  (await server.client.DELETE('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: id } } })).response.status;

describe('tool servers', () => {
  it('deleting one is idempotent: again, or with an id never seen, is a 204 that touches nothing else', async () => {
    const gone = await registerServer('short-lived');
    const kept = await registerServer('long-lived');
    expect(await deleteServer(gone.id)).toBe(204);
    expect(await deleteServer(gone.id)).toBe(204);
    expect(await deleteServer(randomUUID())).toBe(204);
    const listed = (await server.client.GET('/v1/deepagents/mcp-servers')).data!.map((s) => s.id);
    expect(listed).toContain(kept.id);
    expect(listed).not.toContain(gone.id);
  });

  it('one without OAuth has no oauth_mode in any answer (absent, not null)', async () => {
    const created = await registerServer('plain-headers');
    expect(created).not.toHaveProperty('oauth_mode');
    const read = await server.client.GET('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: created.id } } });
    expect(read.data).toMatchObject({ auth_type: 'headers' });
    expect(read.data).not.toHaveProperty('oauth_mode');
    const listed = (await server.client.GET('/v1/deepagents/mcp-servers')).data!.find((s) => s.id === created.id)!;
    expect(listed).not.toHaveProperty('oauth_mode');
  });
});

describe('agent permissions', () => {
  const agentCount = async () => (await server.client.GET('/v1/deepagents/agents', { params: { query: { page_size: 100 } } })).data!.items.length;

  it('keep shared_users as sent and return them on create and read', async () => {
    const permissions = { identity: 'shared' as const, visibility: 'tenant' as const, shared_users: { read: ['reader-1'], run: ['runner-1', 'runner-2'], update: [] } };
    const created = await server.client.POST('/v1/deepagents/agents', {
      body: { name: 'shared-with-some', runtime: { model: { model_id: 'scripted:demo' } }, permissions },
    });
    expect(created.response.status).toBe(201);
    expect(created.data!.permissions).toMatchObject(permissions);
    const read = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: created.data!.id } } });
    expect(read.data!.permissions).toMatchObject(permissions);
  });

  it('refuse shared_users that are not lists of user ids with a 422 naming the field, and create nothing', async () => {
    const before = await agentCount();
    const res = await fetch(`${server.url}/v1/deepagents/agents`, {
      method: 'POST',
      headers: { 'x-api-key': server.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bad-sharing', runtime: { model: { model_id: 'scripted:demo' } }, permissions: { shared_users: { read: 'reader-1' } } }),
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { code: string; errors: { loc: (string | number)[] }[] };
    expect(body.code).toBe('validation_failed');
    expect(body.errors[0]!.loc).toEqual(['body', 'permissions', 'shared_users', 'read']);
    expect(await agentCount()).toBe(before);
  });

  it('refuse the same in a raw agent.json (the hosted CLI’s layout), naming that file, and write no revision', async () => {
    const created = await server.client.POST('/v1/deepagents/agents', { body: { name: 'file-sharing', runtime: { model: { model_id: 'scripted:demo' } } } });
    const path = { agent_id: created.data!.id };
    const agentJson = JSON.stringify({ name: 'file-sharing', model: 'scripted:demo', permissions: { shared_users: 'everyone' } });
    const res = await fetch(`${server.url}/v1/deepagents/agents/${path.agent_id}`, {
      method: 'PATCH',
      headers: { 'x-api-key': server.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ files: { 'agent.json': { content: agentJson } } }),
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(await res.json())).toContain('permissions.shared_users');
    const read = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path } });
    expect(read.data!.revision).toBe(created.data!.revision);
  });
});

describe('the served OpenAPI document', () => {
  type Schema = { type?: unknown; $ref?: string; anyOf?: unknown[]; allOf?: Schema[]; properties?: Record<string, Schema>; additionalProperties?: Schema; required?: string[] };
  type Doc = { components: { schemas: Record<string, Schema> }; paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
  let doc: Doc;
  beforeAll(async () => {
    doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as Doc;
  });

  it('declares shared_users, never-null file contents in answers, an optional non-null oauth_mode, and no 404 for a tool-server delete', () => {
    const schemas = doc.components.schemas;
    expect(schemas.AgentPermissions!.properties!.shared_users).toEqual({ $ref: '#/components/schemas/SharedUsers' });
    expect(Object.keys(schemas.SharedUsers!.properties!)).toEqual(['read', 'run', 'update']);
    const agent = schemas.Agent!;
    const files = (agent.properties ?? agent.allOf!.find((part) => part.properties?.files)!.properties!).files!;
    const target = files.$ref ?? files.allOf?.find((part) => part.$ref)?.$ref;
    const filesSchema = target ? schemas[target.split('/').pop()!]! : files;
    expect(filesSchema.additionalProperties!.properties!.content).toMatchObject({ type: 'string' });
    expect(schemas.McpServer!.properties!.oauth_mode).toEqual({ $ref: '#/components/schemas/OAuthMode' });
    expect(Object.keys(doc.paths['/v1/deepagents/mcp-servers/{mcp_server_id}']!.delete!.responses)).not.toContain('404');
  });
});
