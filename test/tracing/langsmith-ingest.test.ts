// The official `langsmith` client and LangChain's tracer, pointed at Hangar, send traces that the
// read API then shows: LangSmith-compatible ingestion end to end.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { awaitAllCallbacks } from '@langchain/core/callbacks/promises';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { LangChainTracer } from '@langchain/core/tracers/tracer_langchain';
import { Client } from 'langsmith';
import { traceable } from 'langsmith/traceable';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StandInProviderModel } from '../support/stand-in-model.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** A langsmith client configured the way an application would be (endpoint + key, nothing else). */
function sdkClient(apiKey: string): Client {
  return new Client({ apiUrl: `${server.url}/langsmith`, apiKey });
}

async function projectByName(name: string) {
  const list = await server.client.GET('/v1/tracing/projects');
  expect(list.response.status).toBe(200);
  return list.data!.items.find((p) => p.name === name);
}

describe('LangSmith-compatible ingestion', () => {
  it('answers the SDK info request with multipart ingestion switched on', async () => {
    const res = await fetch(`${server.url}/langsmith/info`, { headers: { 'x-api-key': server.adminKey } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { batch_ingest_config: { use_multipart_endpoint: boolean }; instance_flags: Record<string, boolean> };
    expect(body.batch_ingest_config.use_multipart_endpoint).toBe(true);
    expect(body.instance_flags.gzip_body_enabled).toBe(false);
  });

  it('stores a LangChain chain traced by LangChainTracer with the official client, with its model call and tokens', async () => {
    const client = sdkClient(server.adminKey);
    const tracer = new LangChainTracer({ projectName: 'sdk-chain', client });
    const model = new StandInProviderModel([{ content: 'Paris', inputTokens: 11, outputTokens: 2 }]);
    const chain = ChatPromptTemplate.fromMessages([['human', 'Capital of {country}?']]).pipe(model).pipe(new StringOutputParser());
    const answer = await chain.invoke({ country: 'France' }, { callbacks: [tracer], runName: 'capital-chain' });
    expect(answer).toBe('Paris');
    await awaitAllCallbacks();
    await client.awaitPendingTraceBatches();

    const project = await projectByName('sdk-chain');
    expect(project).toBeDefined();
    const runs = await server.client.GET('/v1/tracing/projects/{project_id}/runs', { params: { path: { project_id: project!.id } } });
    expect(runs.response.status).toBe(200);
    expect(runs.data!.items).toHaveLength(1);
    const root = runs.data!.items[0]!;
    expect(root).toMatchObject({ name: 'capital-chain', run_type: 'chain', status: 'success', parent_run_id: null, prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 });
    expect(root.latency_ms).toBeGreaterThanOrEqual(0);

    const tree = await server.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: root.id } } });
    expect(tree.response.status).toBe(200);
    const children = tree.data!.child_runs;
    expect(children.map((c) => c.run_type)).toEqual(['prompt', 'llm', 'parser']);
    const llm = children[1]!;
    expect(llm).toMatchObject({ prompt_tokens: 11, completion_tokens: 2, total_tokens: 13, trace_id: root.id, parent_run_id: root.id, status: 'success' });
    expect(llm.metadata).toMatchObject({ ls_provider: 'stand-in-provider', ls_model_name: 'stand-in-model-1' });
    expect(JSON.stringify(llm.inputs)).toContain('Capital of France?');
    expect(llm.dotted_order.startsWith(root.dotted_order + '.')).toBe(true);
    expect(tree.data!.total_tokens).toBe(13);
    // The SDK used the multipart endpoint (not a fallback) and got no error back.
    expect(server.logs()).toMatch(/"method":"POST","path":"\/langsmith\/runs\/multipart","status":202/);
  });

  it('stores nested traceable functions, including a failure, in the project they name', async () => {
    const client = sdkClient(server.adminKey);
    const lookup = traceable(async (city: string) => ({ city, temperature: 21 }), { name: 'lookup-weather', run_type: 'tool', client, project_name: 'sdk-traceable', tracingEnabled: true });
    const broken = traceable(async () => { throw new Error('upstream timed out'); }, { name: 'flaky-step', client, project_name: 'sdk-traceable', tracingEnabled: true });
    const agent = traceable(
      async (question: string) => {
        const weather = await lookup('Lyon');
        await broken().catch(() => undefined);
        return `${question}: ${weather.temperature}`;
      },
      { name: 'weather-agent', client, project_name: 'sdk-traceable', tracingEnabled: true },
    );
    expect(await agent('How warm')).toBe('How warm: 21');
    await client.awaitPendingTraceBatches();

    const project = await projectByName('sdk-traceable');
    const runs = await server.client.GET('/v1/tracing/projects/{project_id}/runs', { params: { path: { project_id: project!.id } } });
    const root = runs.data!.items[0]!;
    expect(root.name).toBe('weather-agent');
    const tree = await server.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: root.id } } });
    const [tool, failed] = tree.data!.child_runs;
    expect(tool).toMatchObject({ name: 'lookup-weather', run_type: 'tool', status: 'success' });
    expect(JSON.stringify(tool!.outputs)).toContain('21');
    expect(failed).toMatchObject({ name: 'flaky-step', status: 'error' });
    expect(failed!.error).toContain('upstream timed out');
  });

  it('an external script configured only by LANGSMITH_* environment variables shows up in its project', async () => {
    const script = new URL('./fixtures/external-app.mjs', import.meta.url).pathname;
    const { stdout } = await promisify(execFile)(process.execPath, [script], {
      env: { PATH: process.env.PATH, LANGSMITH_TRACING: 'true', LANGSMITH_ENDPOINT: `${server.url}/langsmith`, LANGSMITH_API_KEY: server.adminKey, LANGSMITH_PROJECT: 'external-app' },
    });
    expect(stdout.trim()).toBe('hangar tracing -> 1 doc(s)');
    const project = await projectByName('external-app');
    expect(project).toBeDefined();
    const runs = await server.client.GET('/v1/tracing/projects/{project_id}/runs', { params: { path: { project_id: project!.id } } });
    expect(runs.data!.items.map((r) => r.name)).toEqual(['external-rag-app']);
    const tree = await server.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: runs.data!.items[0]!.id } } });
    expect(tree.data!.child_runs.map((c) => [c.name, c.run_type])).toEqual([['retrieve-docs', 'retriever']]);
  });

  it('accepts single creates and patches when the client does not batch', async () => {
    const client = new Client({ apiUrl: `${server.url}/langsmith`, apiKey: server.adminKey, autoBatchTracing: false });
    const id = crypto.randomUUID();
    await client.createRun({ id, name: 'unbatched', run_type: 'chain', inputs: { q: 1 }, project_name: 'sdk-unbatched', start_time: Date.now() });
    await client.updateRun(id, { outputs: { a: 2 }, end_time: Date.now() });
    const run = await server.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: id } } });
    expect(run.data).toMatchObject({ name: 'unbatched', status: 'success', inputs: { q: 1 }, outputs: { a: 2 }, trace_id: id });
  });
});
