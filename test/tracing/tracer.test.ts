// Hangar's tracer on a real deep agent (deepagents on LangGraph) with a tool call and a subagent:
// the stored tree, token counts, test-run marking, and secrets that never reach the store.
import { tool } from '@langchain/core/tools';
import { createDeepAgent } from 'deepagents';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HangarTracer } from '../../src/tracing/tracer.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { StandInProviderModel } from '../support/stand-in-model.js';

let server: TestServer;
let workspaceId: string;


beforeAll(async () => {
  server = await startTestServer();
  workspaceId = (await server.hangar.services.workspaces.authenticate(server.adminKey))!.workspaceId;
});
afterAll(async () => {
  await server?.close();
});

const TOOL_ARG_SECRET = 'sk-PLANTEDtoolArgumentSecret0042';
const HEADER_SECRET = 'hdr-planted-credential-7f3a9c';

type Tree = { name: string; run_type: string; total_tokens: number | null; prompt_tokens: number | null; completion_tokens: number | null; child_runs: Tree[]; inputs: unknown; outputs: unknown; metadata: Record<string, unknown>; tags: string[]; status: string };
const flatten = (t: Tree): Tree[] => [t, ...t.child_runs.flatMap(flatten)];

async function dumpTraces(): Promise<string> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    return JSON.stringify((await client.query('SELECT * FROM tracing_runs')).rows);
  } finally {
    await client.end();
  }
}

describe('HangarTracer', () => {
  it('stores a deep agent run with a tool call and a subagent as one tree with token counts, secrets redacted', async () => {
    // A tool server whose credential header must never appear in a trace, even when a tool echoes it.
    await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Weather', url: 'https://weather.example.com/mcp', headers: [{ key: 'X-Weather-Key', value: HEADER_SECRET }] } });
    const lookup = tool(async ({ city }) => `21°C in ${city} (authenticated with ${HEADER_SECRET})`, {
      name: 'lookup_weather',
      description: 'Current weather of a city.',
      schema: z.object({ city: z.string(), api_key: z.string() }),
    });
    const model = new StandInProviderModel([
      { content: '', toolCalls: [{ name: 'lookup_weather', args: { city: 'Lyon', api_key: TOOL_ARG_SECRET }, id: 'call_1' }], inputTokens: 20, outputTokens: 5 },
      { content: '', toolCalls: [{ name: 'task', args: { description: 'Find tomorrow’s forecast for Lyon', subagent_type: 'researcher' }, id: 'call_2' }], inputTokens: 30, outputTokens: 6 },
      { content: 'Sunny tomorrow.', inputTokens: 15, outputTokens: 4 },
      { content: 'It is 21°C, and sunny tomorrow.', inputTokens: 40, outputTokens: 8 },
    ]);
    const agent = createDeepAgent({
      model,
      tools: [lookup],
      subagents: [{ name: 'researcher', description: 'Looks things up.', systemPrompt: 'You research.' }],
    });
    const tracer = new HangarTracer({
      sink: (batch) => server.hangar.services.tracing.record(workspaceId, batch),
      projectName: 'agent-runs',
      metadata: { thread_id: 'thread-1', test_run: true },
      tags: ['test-run'],
      onError: (error) => {
        throw error;
      },
    });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Lyon?' }] }, { callbacks: [tracer] });
    expect(String(result.messages.at(-1)!.content)).toBe('It is 21°C, and sunny tomorrow.');
    await tracer.flush();
    expect(tracer.rootRunId).toBeDefined();

    const got = await server.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: tracer.rootRunId! } } });
    expect(got.response.status).toBe(200);
    const root = got.data as unknown as Tree;
    expect(root).toMatchObject({ status: 'success', prompt_tokens: 105, completion_tokens: 23, total_tokens: 128 });
    expect(root.metadata).toMatchObject({ thread_id: 'thread-1', test_run: true });
    expect(root.tags).toContain('test-run');

    const runs = flatten(root);
    const models = runs.filter((r) => r.run_type === 'llm');
    expect(models.map((m) => m.total_tokens)).toEqual([25, 36, 19, 48]);
    const weather = runs.find((r) => r.run_type === 'tool' && r.name === 'lookup_weather')!;
    expect(JSON.stringify(weather.inputs)).toContain('Lyon');
    expect(JSON.stringify(weather.outputs)).toContain('21°C in Lyon');
    // The subagent runs beneath the task tool call, with its own model call.
    const task = runs.find((r) => r.run_type === 'tool' && r.name === 'task')!;
    const underTask = flatten(task).filter((r) => r.run_type === 'llm');
    expect(underTask.map((m) => m.total_tokens)).toEqual([19]);
    expect(task.total_tokens).toBe(19);
    // Model inputs are plain message dicts, not LangChain constructor JSON.
    expect(JSON.stringify(models[0]!.inputs)).toContain('"type":"human"');
    expect(JSON.stringify(models[0]!.inputs)).not.toContain('"lc":1');

    const project = (await server.client.GET('/v1/tracing/projects')).data!.items.find((p) => p.name === 'agent-runs')!;
    const listed = await server.client.GET('/v1/tracing/projects/{project_id}/runs', { params: { path: { project_id: project.id } } });
    expect(listed.data!.items.map((r) => r.id)).toEqual([tracer.rootRunId]);

    const stored = await dumpTraces();
    expect(stored).toContain('lookup_weather');
    expect(stored).not.toContain(TOOL_ARG_SECRET);
    expect(stored).not.toContain(HEADER_SECRET);
  });

  it('records a failing run as an error without failing because of tracing', async () => {
    const failing = new StandInProviderModel([{ content: '', toolCalls: [{ name: 'explode', args: {}, id: 'c1' }], inputTokens: 1, outputTokens: 1 }]);
    const explode = tool(async () => { throw new Error('tool exploded'); }, { name: 'explode', description: 'Fails.', schema: z.object({}) });
    const agent = createDeepAgent({ model: failing, tools: [explode] });
    const failures: unknown[] = [];
    // A sink that cannot store anything: the run still completes normally.
    const broken = new HangarTracer({ sink: async () => { throw new Error('store down'); }, onError: (e) => failures.push(e) });
    const tracer = new HangarTracer({ sink: (batch) => server.hangar.services.tracing.record(workspaceId, batch) });
    await agent.invoke({ messages: [{ role: 'user', content: 'go' }] }, { callbacks: [tracer, broken], recursionLimit: 6 }).catch(() => undefined);
    await Promise.all([tracer.flush(), broken.flush()]);
    expect(failures.length).toBeGreaterThan(0);
    const got = await server.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: tracer.rootRunId! } } });
    const toolRun = flatten(got.data as unknown as Tree).find((r) => r.name === 'explode')!;
    expect(toolRun).toBeDefined();
    expect(JSON.stringify(toolRun.outputs ?? '') + String((toolRun as unknown as { error: string | null }).error)).toContain('tool exploded');
  });
});
