// The official LangGraph SDK rejoins a stream by itself: a replica that stops ends its streams of
// runs that go on elsewhere (round 6, "Runs across a stop"), and the SDK, told where to rejoin by the
// stream's `Location`, joins again with Last-Event-ID through the same base URL (a load balancer that
// no longer sends to the stopped replica). The caller sees one stream: every event once, to the
// run's answer. Waits on events and statuses, never on time.
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hangar } from '../../src/server.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, startWorker } from '../runtime/support.js';

const WORDS = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');

let api: TestServer;
let worker: Hangar;
let agentId: string;

beforeAll(async () => {
  // The API processes execute nothing: the run goes on in the worker while a front stops.
  api = await startTestServer({ env: { HANGAR_ROLE: 'api' } });
  const config = await api.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow', model_id: 'scripted:slow', parameters: { delay_ms: 100 } } });
  expect(config.response.status).toBe(201);
  agentId = await createAgent(api, { runtime: { model: { model_id: 'slow' } } });
  worker = await startWorker(api);
});
afterAll(async () => {
  await worker?.close();
  await api?.close();
});

type Chunk = { event: string; data: unknown; id?: string };
type Req = { method: string; url: string; query: URLSearchParams; lastEventId: string | null };

/** Two API replicas behind one base URL: `front` until it is taken out to stop, then `api`. */
async function balancedClient() {
  const front = await startTestServer({ databaseUrl: api.databaseUrl, dataDir: api.dataDir, adminKey: api.adminKey, env: { HANGAR_ROLE: 'api', HANGAR_DRAIN_TIMEOUT_MS: '300' } });
  const state: { stopping?: Promise<void> } = {};
  const balanced: typeof fetch = (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    return fetch(state.stopping ? url.replace(front.url, api.url) : url, init);
  };
  const requests: Req[] = [];
  const client = new Client({
    apiUrl: `${front.url}/v1/deepagents`,
    defaultHeaders: { 'X-Api-Key': api.adminKey },
    callerOptions: { maxRetries: 0, fetch: balanced },
    onRequest: (url, init) => {
      requests.push({ method: init.method ?? 'GET', url: url.pathname, query: url.searchParams, lastEventId: new Headers(init.headers).get('last-event-id') });
      return init;
    },
  });
  /** Read `chunks` to their end, stopping `front` at the first token (the run executes in the worker). */
  const readStoppingFront = async (chunks: AsyncIterable<Chunk>): Promise<Chunk[]> => {
    const out: Chunk[] = [];
    try {
      for await (const chunk of chunks) {
        out.push(chunk);
        if (chunk.event === 'messages' && !state.stopping) state.stopping = front.close();
      }
    } finally {
      await (state.stopping ?? front.close());
    }
    return out;
  };
  return { client, requests, readStoppingFront };
}

/** The SDK joined again by itself after the last event it had; the caller saw every event once, to the answer. */
async function expectRejoinedToTheEnd(threadId: string, runId: string, chunks: Chunk[], requests: Req[]) {
  const rejoins = rejoinsOf(threadId, runId, requests);
  expectEveryEventOnce(chunks);
  const values = chunks.filter((c) => c.event === 'values').at(-1)!.data as Record<string, unknown>;
  expect(lastAiText(values)).toBe(`You said: ${WORDS}`);
  const run = await api.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: runId } } });
  expect(run.data).toMatchObject({ status: 'success', metadata: { attempt: 1 } });
  return rejoins;
}

function rejoinsOf(threadId: string, runId: string, requests: Req[]): Req[] {
  const rejoins = requests.filter((r) => r.method === 'GET' && r.url === `/v1/deepagents/threads/${threadId}/runs/${runId}/stream` && r.lastEventId !== null);
  expect(rejoins.length).toBeGreaterThanOrEqual(1);
  expect(Number(rejoins[0]!.lastEventId)).toBeGreaterThan(0);
  return rejoins;
}

function expectEveryEventOnce(chunks: Chunk[]) {
  const ids = chunks.map((c) => Number(c.id));
  expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => i + 1));
  expect(chunks.filter((c) => c.event === 'error')).toEqual([]);
}

describe('the LangGraph SDK rejoins a stream that a stopping replica ended', () => {
  it('runs.stream reads on, through Location and Last-Event-ID, to the run’s answer with every event once', async () => {
    const { client, requests, readStoppingFront } = await balancedClient();
    const threadId = await createThread(api, agentId);
    let runId: string | undefined;
    const chunks = await readStoppingFront(
      client.runs.stream(threadId, agentId, {
        input: { messages: [{ role: 'user', content: WORDS }] },
        streamMode: ['messages-tuple', 'values'],
        onRunCreated: (meta) => {
          runId = meta.run_id;
        },
      }) as AsyncIterable<Chunk>,
    );
    expect(runId).toBeDefined();
    await expectRejoinedToTheEnd(threadId, runId!, chunks, requests);
  }, 90_000);

  it('runs.joinStream reads on the same way, keeping its stream modes', async () => {
    const { client, requests, readStoppingFront } = await balancedClient();
    const threadId = await createThread(api, agentId);
    const run = await client.runs.create(threadId, agentId, { input: { messages: [{ role: 'user', content: WORDS }] }, streamMode: ['messages-tuple', 'values'] });
    const chunks = await readStoppingFront(client.runs.joinStream(threadId, run.run_id, { streamMode: ['messages-tuple', 'values'] }) as AsyncIterable<Chunk>);
    const rejoins = await expectRejoinedToTheEnd(threadId, run.run_id, chunks, requests);
    // Location carries no query: the SDK sends the join's own again.
    expect(rejoins[0]!.query.getAll('stream_mode')).toEqual(['messages-tuple', 'values']);
  }, 90_000);
});
