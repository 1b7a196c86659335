// Helpers of the runtime end-to-end tests: agents on the `scripted` model, threads, streamed runs.
import { collect, streamRun, type RunStream, type SseEvent, type StreamRunBody } from '../../src/client/stream.js';
import type { components } from '../../src/client/schema.js';
import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config/index.js';
import { startHangar, type Hangar } from '../../src/server.js';
import type { TestServer } from '../support/server.js';

type CreateAgent = components['schemas']['CreateAgentRequest'];

/** Start a worker-only server (`HANGAR_ROLE=worker`) on `api`'s database, silent; `env` adds settings. */
export function startWorker(api: TestServer, env: Record<string, string> = {}): Promise<Hangar> {
  return startHangar(
    loadConfig({
      flags: { port: 0, databaseUrl: api.databaseUrl, dataDir: api.dataDir },
      env: { HANGAR_BOOTSTRAP_API_KEY: api.adminKey, HANGAR_ROLE: 'worker', LOG_LEVEL: 'silent', ...env },
    }),
    { logDestination: new Writable({ write: (_c, _e, done) => done() }), announce: () => {} },
  );
}

/** Create an agent (scripted model unless said otherwise) and return its id. */
export async function createAgent(server: TestServer, body: Partial<CreateAgent> = {}): Promise<string> {
  const res = await server.client.POST('/v1/deepagents/agents', {
    body: { name: `agent-${Math.random().toString(36).slice(2)}`, runtime: { model: { model_id: 'scripted:demo' } }, instructions: 'You are a test agent.', ...body },
  });
  if (!res.data) throw new Error(`agent create failed: ${res.response.status} ${JSON.stringify(res.error)}`);
  return res.data.id;
}

/** Create a thread of `agentId`. */
export async function createThread(server: TestServer, agentId: string, options?: { test_run?: boolean; skip_memory_write_protection?: boolean }): Promise<string> {
  const res = await server.client.POST('/v1/deepagents/threads', { body: { agent_id: agentId, ...(options ? { options } : {}) } });
  if (!res.data) throw new Error(`thread create failed: ${res.response.status} ${JSON.stringify(res.error)}`);
  return res.data.id;
}

/** Start a run and return the open stream. */
export function start(server: TestServer, threadId: string, body: StreamRunBody, apiKey = server.adminKey): Promise<RunStream> {
  return streamRun({ baseUrl: server.url, apiKey, threadId, body });
}

/** Read `n` events and leave the stream open (the run goes on; `collect` reads the rest). */
export async function take(stream: RunStream, n: number): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  while (out.length < n) {
    const next = await stream.events.next();
    if (next.done) break;
    out.push(next.value);
  }
  return out;
}

/** Run to the end and return every event. */
export async function run(server: TestServer, threadId: string, body: StreamRunBody): Promise<{ stream: RunStream; events: SseEvent[] }> {
  const stream = await start(server, threadId, body);
  if (stream.status !== 200) throw new Error(`run refused: ${stream.status} ${JSON.stringify(stream.error)}`);
  return { stream, events: await collect(stream) };
}

/** The last `values` event's data. */
export function lastValues(events: SseEvent[]): Record<string, unknown> {
  const values = events.filter((e) => e.event === 'values');
  return values.at(-1)!.data as Record<string, unknown>;
}

/** Text of the last AI message of a values payload. */
export function lastAiText(values: Record<string, unknown>): string {
  const messages = values.messages as { type: string; content: unknown }[];
  const ai = messages.filter((m) => m.type === 'ai').at(-1)!;
  return typeof ai.content === 'string' ? ai.content : JSON.stringify(ai.content);
}
