// Saved model configurations: CRUD, the API key sealed and never returned, resolution for the runtime,
// and agents naming a configuration instead of <provider>:<model_id>.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
const KEY = 'sk-model-provider-secret-0123456789';

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe('model configurations', () => {
  it('create, use from an agent, resolve, update, delete', async () => {
    const created = await server.client.POST('/v1/deepagents/model-configs', {
      body: { name: 'fast', model_id: 'openai:gpt-5.4-mini', parameters: { temperature: 0.2, max_tokens: 512, base_url: 'http://127.0.0.1:9/v1' }, api_key: KEY },
    });
    expect(created.response.status).toBe(201);
    expect(created.data).toMatchObject({ name: 'fast', model_id: 'openai:gpt-5.4-mini', has_api_key: true, parameters: { temperature: 0.2, max_tokens: 512 } });
    expect(JSON.stringify(created.data)).not.toContain(KEY);
    const id = created.data!.id;

    const client = new pg.Client({ connectionString: server.databaseUrl });
    await client.connect();
    const stored = (await client.query('SELECT api_key_encrypted FROM model_configs WHERE id = $1', [id])).rows[0].api_key_encrypted as string;
    await client.end();
    expect(stored).not.toContain(KEY);

    const caller = (await server.hangar.services.workspaces.authenticate(server.adminKey))!;
    expect(await server.hangar.services.modelConfigs.resolve(caller.workspaceId, 'fast')).toEqual({
      name: 'fast',
      modelId: 'openai:gpt-5.4-mini',
      parameters: { temperature: 0.2, max_tokens: 512, base_url: 'http://127.0.0.1:9/v1' },
      apiKey: KEY,
    });

    const agent = await server.client.POST('/v1/deepagents/agents', { body: { name: 'uses-config', runtime: { model: { model_id: 'fast' } } } });
    expect(agent.response.status).toBe(201);
    expect(agent.data!.runtime.model.model_id).toBe('fast');

    const dup = await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'fast', model_id: 'openai:x' } });
    expect(dup.error).toMatchObject({ code: 'model_config_name_taken', status: 409 });
    const colon = await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'a:b', model_id: 'openai:x' } });
    expect(colon.response.status).toBe(422);
    const badModel = await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'b', model_id: 'gpt' } });
    expect(badModel.response.status).toBe(422);
    // A provider this server cannot run is refused at save, with the ones it can, on create and update.
    const unknownProvider = await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'b', model_id: 'unknownprov:foo' } });
    expect(unknownProvider.response.status).toBe(422);
    expect(unknownProvider.error).toMatchObject({ code: 'validation_failed' });
    expect(unknownProvider.error!.detail).toContain('unknown provider "unknownprov"');
    expect(unknownProvider.error!.detail).toContain('scripted, openai, azure_openai, anthropic, google-genai, ollama');
    const unknownUpdate = await server.client.PATCH('/v1/deepagents/model-configs/{model_config_id}', {
      params: { path: { model_config_id: id } },
      body: { model_id: 'unknownprov:foo' },
    });
    expect(unknownUpdate.response.status).toBe(422);

    const updated = await server.client.PATCH('/v1/deepagents/model-configs/{model_config_id}', {
      params: { path: { model_config_id: id } },
      body: { parameters: { temperature: 1 }, api_key: null },
    });
    expect(updated.data).toMatchObject({ parameters: { temperature: 1 }, has_api_key: false });
    expect(await server.hangar.services.modelConfigs.resolve(caller.workspaceId, 'fast')).toEqual({ name: 'fast', modelId: 'openai:gpt-5.4-mini', parameters: { temperature: 1 } });

    const other = await server.createWorkspace('models-other');
    expect((await other.client.GET('/v1/deepagents/model-configs/{model_config_id}', { params: { path: { model_config_id: id } } })).response.status).toBe(404);
    const foreign = await other.client.POST('/v1/deepagents/agents', { body: { name: 'x', runtime: { model: { model_id: 'fast' } } } });
    expect(foreign.response.status).toBe(422);

    for (let i = 0; i < 2; i++) {
      expect((await server.client.DELETE('/v1/deepagents/model-configs/{model_config_id}', { params: { path: { model_config_id: id } } })).response.status).toBe(204);
    }
    expect((await server.client.GET('/v1/deepagents/model-configs')).data).toEqual([]);
  });
});
