// Interrupts and resumes in traces, on a real LangGraph graph with a checkpointer: the paused node
// carries the interrupt (not an error), the paused trace is tagged, and the resuming run is tagged.
import { Annotation, Command, END, interrupt, MemorySaver, START, StateGraph } from '@langchain/langgraph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HangarTracer } from '../../src/tracing/tracer.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let workspaceId: string;

beforeAll(async () => {
  server = await startTestServer();
  workspaceId = (await server.hangar.services.workspaces.authenticate(server.adminKey))!.workspaceId;
});
afterAll(async () => {
  await server?.close();
});

type Tree = { name: string; status: string; error: string | null; tags: string[]; inputs: unknown; outputs: unknown; child_runs: Tree[] };
const flatten = (t: Tree): Tree[] => [t, ...t.child_runs.flatMap(flatten)];

describe('interrupts and resumes', () => {
  it('records the pause as the node’s output and tags the paused and the resuming trace', async () => {
    const State = Annotation.Root({ request: Annotation<string>, decision: Annotation<string> });
    const graph = new StateGraph(State)
      .addNode('approval', (s) => ({ decision: `${s.request}: ${String(interrupt({ action: 'delete_file', path: '/memories/x' }))}` }))
      .addEdge(START, 'approval')
      .addEdge('approval', END)
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: 'hitl-1' } };
    const trace = async (input: unknown) => {
      const tracer = new HangarTracer({ sink: (batch) => server.hangar.services.tracing.record(workspaceId, batch), onError: (e) => { throw e; } });
      await graph.invoke(input as never, { ...config, callbacks: [tracer] });
      await tracer.flush();
      const got = await server.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: tracer.rootRunId! } } });
      return got.data as unknown as Tree;
    };

    const paused = await trace({ request: 'cleanup' });
    expect(paused.tags).toContain('interrupted');
    const node = flatten(paused).find((r) => r.name === 'approval')!;
    expect(node).toMatchObject({ status: 'success', error: null });
    expect(node.tags).toContain('interrupt');
    expect(JSON.stringify(node.outputs)).toContain('delete_file');

    const resumed = await trace(new Command({ resume: 'approved' }));
    expect(resumed.tags).toContain('resume');
    expect(resumed.tags).not.toContain('interrupted');
    expect(JSON.stringify(resumed.inputs)).toContain('approved');
    expect(JSON.stringify(flatten(resumed).find((r) => r.name === 'approval')!.outputs)).toContain('cleanup: approved');
  });
});
