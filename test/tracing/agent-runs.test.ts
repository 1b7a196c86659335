// Every agent run is traced: a streamed `scripted` run with tool calls and a subagent produces one
// trace, readable at /threads/{thread_id}/runs/{run_id}/trace, in the thread's project, marked when
// the thread is a test run, with secrets in tool arguments and tool server headers redacted.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, run } from '../runtime/support.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

type Tree = { id: string; name: string; run_type: string; status: string; total_tokens: number | null; prompt_tokens: number | null; inputs: unknown; outputs: unknown; metadata: Record<string, unknown>; tags: string[]; child_runs: Tree[] };
const flatten = (t: Tree): Tree[] => [t, ...t.child_runs.flatMap(flatten)];
const PLANTED = 'Bearer plantedArgumentToken0123456789';
const HEADER = 'planted-header-secret-5d1e';

async function storedTraces(): Promise<string> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    return JSON.stringify((await client.query('SELECT * FROM tracing_runs')).rows);
  } finally {
    await client.end();
  }
}

describe('traced agent runs', () => {
  it('traces a run with tool calls and a subagent: model calls with tokens, tool calls with arguments, the subagent beneath its task', async () => {
    await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'Secretive', url: 'https://secretive.example.com/mcp', headers: [{ key: 'Authorization', value: HEADER }] } });
    const agentId = await createAgent(server, { subagents: [{ name: 'researcher', description: 'Looks things up', instructions: 'You research.' }] });
    const created = await server.client.POST('/v1/deepagents/threads', { body: { agent_id: agentId, options: { test_run: true }, metadata: { tracing_project: 'qa-runs' } } });
    const threadId = created.data!.id;
    const content = [
      `/call write_file {"file_path": "/notes.txt", "content": "auth: ${PLANTED} and ${HEADER}"}`,
      '/call task {"description": "find the answer", "subagent_type": "researcher"}',
    ].join('\n');
    const { stream } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content }] });

    const res = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
    expect(res.response.status).toBe(200);
    const root = res.data as unknown as Tree;
    expect(root.status).toBe('success');
    expect(root.metadata).toMatchObject({ run_id: stream.runId, thread_id: threadId, assistant_id: agentId, is_test_run: true });
    expect(root.tags).toContain('test-run');

    const runs = flatten(root);
    const models = runs.filter((r) => r.run_type === 'llm');
    expect(models.length).toBeGreaterThanOrEqual(3); // main call, subagent call, main answer
    for (const m of models) {
      expect(m.total_tokens).toBeGreaterThan(0);
      expect(m.metadata).toMatchObject({ ls_provider: 'scripted', ls_model_name: 'demo' });
    }
    expect(root.total_tokens).toBe(models.reduce((n, m) => n + m.total_tokens!, 0));
    const write = runs.find((r) => r.run_type === 'tool' && r.name === 'write_file')!;
    expect(JSON.stringify(write.inputs)).toContain('/notes.txt');
    const task = runs.find((r) => r.run_type === 'tool' && r.name === 'task')!;
    expect(JSON.stringify(task.outputs)).toContain('You said: find the answer');
    expect(flatten(task).filter((r) => r.run_type === 'llm')).toHaveLength(1);

    // The trace is in the thread's project, as a root run of it.
    const project = (await server.client.GET('/v1/tracing/projects')).data!.items.find((p) => p.name === 'qa-runs')!;
    const listed = await server.client.GET('/v1/tracing/projects/{project_id}/runs', { params: { path: { project_id: project.id } } });
    expect(listed.data!.items.map((r) => r.id)).toEqual([root.id]);

    const stored = await storedTraces();
    expect(stored).toContain('notes.txt');
    expect(stored).not.toContain('plantedArgumentToken0123456789');
    expect(stored).not.toContain(HEADER);
  });

  it('puts runs of ordinary threads in the default project, one trace per run, and answers 404 for unknown runs', async () => {
    const agentId = await createAgent(server);
    const threadId = await createThread(server, agentId);
    const first = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'hello' }] });
    const second = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'again' }] });
    const traces = await Promise.all(
      [first, second].map((r) => server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: r.stream.runId! } } })),
    );
    const [a, b] = traces.map((t) => t.data as unknown as Tree);
    expect(a!.id).not.toBe(b!.id);
    expect(a!.metadata.is_test_run).toBe(false);
    expect(a!.tags).not.toContain('test-run');
    const defaultProject = (await server.client.GET('/v1/tracing/projects')).data!.items.find((p) => p.is_default)!;
    const listed = await server.client.GET('/v1/tracing/projects/{project_id}/runs', { params: { path: { project_id: defaultProject.id } } });
    expect(listed.data!.items.map((r) => r.id)).toEqual(expect.arrayContaining([a!.id, b!.id]));

    const unknown = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: crypto.randomUUID() } } });
    expect(unknown.response.status).toBe(404);
    expect(unknown.error).toMatchObject({ code: 'run_not_found' });
    const other = await server.createWorkspace('elsewhere');
    const foreign = await other.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: first.stream.runId! } } });
    expect(foreign.response.status).toBe(404);
  });

  it("names a run's root after the agent, keeps its id in metadata, and the name filter finds it", async () => {
    const name = `weather-desk-${Math.random().toString(36).slice(2, 8)}`;
    const agentId = await createAgent(server, { name });
    const threadId = await createThread(server, agentId);
    const { stream } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'hello' }] });
    const res = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
    const root = res.data as unknown as Tree;
    expect(root.name).toBe(name);
    expect(root.metadata).toMatchObject({ assistant_id: agentId, agent_name: name });
    const defaultProject = (await server.client.GET('/v1/tracing/projects')).data!.items.find((p) => p.is_default)!;
    const found = await server.client.GET('/v1/tracing/projects/{project_id}/runs', {
      params: { path: { project_id: defaultProject.id }, query: { name: name.slice(0, 14) } },
    });
    expect(found.data!.items.map((r) => [r.id, r.name])).toEqual([[root.id, name]]);
  });

  it('traces a run that fails at start (its model cannot be built) with its error, listed with the failed traces', async () => {
    const name = `broken-desk-${Math.random().toString(36).slice(2, 8)}`;
    // An agent naming a saved model configuration deleted since (a provider no server can run is refused on save).
    const config = await server.client.POST('/v1/deepagents/model-configs', { body: { name: `${name}-model`, model_id: 'scripted:echo' } });
    const agentId = await createAgent(server, { name, runtime: { model: { model_id: `${name}-model` } } });
    await server.client.DELETE('/v1/deepagents/model-configs/{model_config_id}', { params: { path: { model_config_id: config.data!.id } } });
    const threadId = await createThread(server, agentId);
    const { stream, events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'hello' }] });
    expect(events.at(-1)!.event).toBe('error');
    const res = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
    expect(res.response.status).toBe(200);
    const root = res.data as unknown as Tree & { error: string | null };
    expect(root).toMatchObject({ name, status: 'error', run_type: 'chain' });
    expect(root.error).toContain(`${name}-model`);
    expect(root.error).not.toMatch(/\n\s+at |node_modules|file:\/\//);
    expect(root.metadata).toMatchObject({ run_id: stream.runId, thread_id: threadId, assistant_id: agentId, agent_name: name, model: `${name}-model` });
    const defaultProject = (await server.client.GET('/v1/tracing/projects')).data!.items.find((p) => p.is_default)!;
    const failed = await server.client.GET('/v1/tracing/projects/{project_id}/runs', { params: { path: { project_id: defaultProject.id }, query: { error: 'true', name } } });
    expect(failed.data!.items.map((r) => r.id)).toEqual([root.id]);
  });

  it('with HANGAR_TRACING=false a run has no trace (trace_not_found) and still succeeds', async () => {
    const untraced = await startTestServer({ env: { HANGAR_TRACING: 'false' } });
    try {
      const agentId = await createAgent(untraced);
      const threadId = await createThread(untraced, agentId);
      const { stream } = await run(untraced, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'hello' }] });
      const record = await untraced.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
      expect(record.data!.status).toBe('success');
      const trace = await untraced.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
      expect(trace.response.status).toBe(404);
      expect(trace.error).toMatchObject({ code: 'trace_not_found', status: 404 });
    } finally {
      await untraced.close();
    }
  });
});
