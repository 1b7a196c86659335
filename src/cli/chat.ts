// `hangar chat AGENT [--thread ID] MESSAGE`: one streamed run in the terminal. Tokens go to standard
// output as they arrive; tool calls, tool results and the thread id go to standard error.
import { createHangarClient } from '../client/index.js';
import { streamRun } from '../client/stream.js';

/** Where chat writes. */
export interface ChatOutput {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** Options of one chat turn. */
export interface ChatOptions {
  baseUrl: string;
  apiKey: string;
  /** Agent id, or the exact name of an agent of the workspace. */
  agent: string;
  /** Continue this thread; a new thread when absent. */
  thread?: string | undefined;
  message: string;
  timezone?: string | undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Send `message` to the agent and stream the answer; returns the thread id. Throws with a readable message on failure. */
export async function chat(options: ChatOptions, io: ChatOutput): Promise<string> {
  const client = createHangarClient({ baseUrl: options.baseUrl, apiKey: options.apiKey });
  const agentId = UUID.test(options.agent) ? options.agent : await agentIdByName(client, options.agent);
  let threadId = options.thread;
  if (!threadId) {
    const created = await client.POST('/v1/deepagents/threads', { body: { agent_id: agentId } });
    if (!created.data) throw new Error(`could not create a thread: ${describe(created.error)}`);
    threadId = created.data.id;
  }
  const stream = await streamRun({
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    threadId,
    body: {
      agent_id: agentId,
      messages: [{ role: 'user', content: options.message }],
      stream_mode: ['messages-tuple'],
      ...(options.timezone ? { user_timezone: options.timezone } : {}),
    },
  });
  if (stream.status !== 200) throw new Error(`the run was refused (${stream.status}): ${describe(stream.error)}`);
  let midLine = false;
  const line = (text: string) => {
    if (midLine) io.out('\n');
    midLine = false;
    io.err(`${text}\n`);
  };
  for await (const event of stream.events) {
    if (event.event === 'error') {
      const e = event.data as { error: string; message: string };
      line(`error: ${e.error}: ${e.message}`);
      throw new Error(`the run failed: ${e.message}`);
    }
    if (event.event !== 'messages') continue;
    const [chunk] = event.data as [Record<string, unknown>, Record<string, unknown>];
    if (chunk.type === 'AIMessageChunk') {
      for (const call of (chunk.tool_call_chunks as { name?: string; args?: string }[] | undefined) ?? []) {
        if (call.name) line(`→ ${call.name}(${call.args ?? ''})`);
      }
      if (typeof chunk.content === 'string' && chunk.content !== '') {
        io.out(chunk.content);
        midLine = !chunk.content.endsWith('\n');
      }
    } else if (chunk.type === 'tool') {
      const text = typeof chunk.content === 'string' ? chunk.content : JSON.stringify(chunk.content);
      line(`← ${String(chunk.name ?? 'tool')}: ${text.length > 200 ? `${text.slice(0, 200)}…` : text}`);
    }
  }
  if (midLine) io.out('\n');
  io.err(`thread: ${threadId} (continue with --thread ${threadId})\n`);
  return threadId;
}

/** The id of the one agent named `name` (exact match); an error naming the problem otherwise. */
export async function agentIdByName(client: ReturnType<typeof createHangarClient>, name: string): Promise<string> {
  const res = await client.GET('/v1/deepagents/agents', { params: { query: { name, page_size: 100 } } });
  if (!res.data) throw new Error(`could not list agents: ${describe(res.error)}`);
  const match = res.data.items.filter((a) => a.name === name);
  if (match.length !== 1) throw new Error(match.length === 0 ? `no agent named "${name}"` : `several agents are named "${name}"; use the id`);
  return match[0]!.id;
}

function describe(error: unknown): string {
  if (error && typeof error === 'object' && 'detail' in error) return String((error as { detail: unknown }).detail);
  return JSON.stringify(error);
}
