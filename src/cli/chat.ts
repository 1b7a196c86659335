// `hangar chat AGENT [--thread ID] MESSAGE`: one streamed run in the terminal. Tokens go to standard
// output as they arrive; tool calls, tool results, pending approvals and the thread id go to standard
// error. When the run pauses for a person, each pending action is shown and a decider answers it
// (a prompt in a terminal, --approve/--reject in scripts); the run is resumed with the decisions,
// as often as it pauses. A pause nobody answers is reported to the caller (non-zero exit).
import { createHangarClient, type HangarClient } from '../client/index.js';
import { describeError, reachingFetch } from './target.js';
import { joinRun, streamRun, type SseEvent, type StreamRunBody } from '../client/stream.js';

/** Times a chat joins its run's stream again when it ended before the run (the server stopped). */
const MAX_REJOINS = 5;

/** Where chat writes. */
export interface ChatOutput {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** One tool call waiting for a person. */
export interface PendingAction {
  name: string;
  args: Record<string, unknown>;
  description?: string | undefined;
  /** Decisions the agent's rule allows for it. */
  allowed: string[];
}

/** A person's answer to one pending action (the wire form of a resume decision). */
export type Decision =
  | { type: 'approve' }
  | { type: 'edit'; edited_action: { name: string; args: Record<string, unknown> } }
  | { type: 'reject'; message?: string }
  | { type: 'respond'; message: string };

/** Answers pending actions; `undefined` leaves the action (and the run) waiting. */
export type Decider = (action: PendingAction, index: number, total: number) => Promise<Decision | undefined>;

/** Options of one chat turn. */
export interface ChatOptions {
  baseUrl: string;
  apiKey: string;
  /** Agent id, or the exact name of an agent of the workspace. */
  agent: string;
  /** Continue this thread; a new thread when absent. */
  thread?: string | undefined;
  /** The message; absent: only answer what the thread is waiting for. */
  message?: string | undefined;
  timezone?: string | undefined;
  /** Who answers approvals; without one, a pause ends the chat unanswered. */
  decide?: Decider | undefined;
  /**
   * After a turn, say how to continue the thread (`--thread ID`, the flag of `hangar chat`); false
   * for a caller that keeps the thread itself (`hangar dev`), which only names it.
   */
  continueHint?: boolean | undefined;
}

/** How a chat turn ended. */
export interface ChatResult {
  threadId: string;
  /** The actions still waiting for a person (the run paused and nobody answered); empty when done. */
  pending: PendingAction[];
}

/** A chat failure with a message meant for the terminal. */
export class ChatError extends Error {
  override name = 'ChatError';
  /** The thread the failed turn ran on, when it got that far (its next message may go there). */
  constructor(
    message: string,
    readonly threadId?: string,
  ) {
    super(message);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Send `message` to the agent and stream the answer, handling approvals. Throws ChatError on failure. */
export async function chat(options: ChatOptions, io: ChatOutput): Promise<ChatResult> {
  const reach = reachingFetch(options.baseUrl);
  const client = createHangarClient({ baseUrl: options.baseUrl, apiKey: options.apiKey, fetch: reach });
  const agentId = await resolveAgentId(client, options.agent);
  let pendingFirst: PendingRequest[] = [];
  let threadId = options.thread;
  if (!threadId) {
    const created = await client.POST('/v1/deepagents/threads', { body: { agent_id: agentId } });
    if (!created.data) throw new ChatError(`could not create a thread: ${describeError(created.error)}`);
    threadId = created.data.id;
  } else {
    const thread = await client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } });
    if (!thread.data) throw new ChatError(`no thread ${threadId}: ${describeError(thread.error)}`);
    // A new message on a thread waiting for approval would cancel the waiting call: answer it first.
    if (thread.data.status === 'interrupted') pendingFirst = requestsOf(Object.values(thread.data.interrupts ?? {}).flat());
  }
  const id = threadId;
  const continueHint = options.continueHint === false ? '' : ` (--thread ${id})`;
  if (pendingFirst.length > 0) {
    io.err(`thread ${id} is waiting for approval:\n`);
    const result = await answer(pendingFirst);
    if (result.pending.length > 0) return result;
  }
  if (options.message === undefined) return { threadId: id, pending: [] };
  return turn({ messages: [{ role: 'user', content: options.message }] });

  /**
   * Ask the decider about every action; resume when all are answered. Several requests at once
   * (subagents that paused in parallel) are answered each by its interrupt id.
   */
  async function answer(requests: PendingRequest[]): Promise<ChatResult> {
    const actions = requests.flatMap((r) => r.actions);
    // A description of several lines ("…requires approval.\nArgs: {…}") stays under its action, indented.
    actions.forEach((a, i) => io.err(`  [${i + 1}/${actions.length}] ${a.name}(${JSON.stringify(a.args)})${a.description ? ` — ${a.description.replace(/\n+/g, '\n      ')}` : ''}\n`));
    const decisions: Decision[] = [];
    for (const [i, action] of actions.entries()) {
      const decision = options.decide ? await options.decide(action, i, actions.length) : undefined;
      if (!decision) {
        io.err(`thread: ${id} is waiting for approval (answer with: hangar chat ${options.agent} --thread ${id} --approve | --reject)\n`);
        return { threadId: id, pending: actions };
      }
      decisions.push(decision);
    }
    let next = 0;
    const keyed = Object.fromEntries(requests.map((r) => [r.id, { decisions: decisions.slice(next, (next += r.actions.length)) }]));
    const resume = requests.length === 1 ? { decisions } : keyed;
    // A resume still carries a message list; an empty system message is the no-op clients send.
    return turn({ messages: [{ role: 'system', content: '' }], command: { resume } });
  }

  /** One run: stream it; on a pause, answer and resume. */
  async function turn(input: Pick<StreamRunBody, 'messages'> & { command?: unknown }): Promise<ChatResult> {
    const stream = await streamRun({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      fetch: reach,
      threadId: id,
      body: {
        agent_id: agentId,
        ...input,
        stream_mode: ['messages-tuple', 'updates'],
        ...(options.timezone ? { user_timezone: options.timezone } : {}),
      } as StreamRunBody,
    });
    if (stream.status !== 200) throw new ChatError(`the run was refused (${stream.status}): ${describeError(stream.error)}`);
    let midLine = false;
    const line = (text: string) => {
      if (midLine) io.out('\n');
      midLine = false;
      io.err(`${text}\n`);
    };
    // Every approval request the run paused on, by interrupt id (parallel subagents each send one).
    const interrupts = new Map<string, { id: string | null; value: unknown }>();
    let failure: ChatError | undefined;
    let lastEventId: string | undefined;
    const runId = stream.runId;
    for await (const event of rejoining(stream.events)) {
      if (event.id !== undefined) lastEventId = event.id;
      if (failure) continue;
      if (event.event === 'error') {
        // `code` is a stable run error code (model_auth_failed, model_rate_limited, run_timeout, …).
        const e = event.data as { code?: string; error: string; message: string };
        line(`error: ${e.code ?? e.error}: ${e.message}`);
        // Read on to the stream's end: the server ends it once the run is settled, so the thread
        // has been freed when this says that it takes the next message.
        // The message is on the line above: the failure names the code and what to do next, not the message again.
        failure = new ChatError(`the run failed (${e.code ?? e.error}); the thread ${id} takes the next message${continueHint}`, id);
        continue;
      }
      if (event.event === 'updates') {
        const found = (event.data as { __interrupt__?: { id?: string; value: unknown }[] }).__interrupt__;
        for (const item of found ?? []) interrupts.set(item.id ?? JSON.stringify(item.value), { id: item.id ?? null, value: item.value });
        continue;
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
    if (failure) throw failure;
    if (midLine) io.out('\n');

    /**
     * The stream's events, and when it ended before the run did (a server that stopped hands its
     * runs on and ends its streams), those of the run joined again after the last event read, at
     * the same URL (another replica behind it, or the server again once restarted).
     */
    async function* rejoining(first: AsyncGenerator<SseEvent>): AsyncGenerator<SseEvent> {
      yield* first;
      for (let rejoins = 0; runId; rejoins++) {
        let status: string | undefined;
        try {
          status = (await client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: id, run_id: runId } } })).data?.status;
        } catch {
          status = undefined;
        }
        if (status !== undefined && status !== 'pending' && status !== 'running') return;
        if (status === undefined || rejoins >= MAX_REJOINS) {
          if (midLine) io.out('\n');
          midLine = false;
          throw new ChatError(
            `the stream ended before run ${runId} did (the server stopped${status === undefined ? ' and none answers' : ''}); the run goes on once a server takes it${options.continueHint === false ? ` on thread ${id}` : `: continue with --thread ${id}`}`,
            id,
          );
        }
        const joined = await joinRun({ baseUrl: options.baseUrl, apiKey: options.apiKey, fetch: reach, threadId: id, runId, ...(lastEventId ? { lastEventId } : {}) }).catch(() => undefined);
        if (joined?.status === 200) yield* joined.events;
      }
    }
    const requests = requestsOf([...interrupts.values()]);
    if (requests.length > 0) {
      io.err('paused for approval:\n');
      return answer(requests);
    }
    io.err(`thread: ${id}${options.continueHint === false ? '' : ` (continue with --thread ${id})`}\n`);
    return { threadId: id, pending: [] };
  }
}

/** An approval request the thread waits on: its interrupt id and its actions. */
interface PendingRequest {
  id: string | null;
  actions: PendingAction[];
}

/** The approval requests among interrupts (`{id, value: {action_requests, review_configs}}`); other pauses are left out. */
function requestsOf(interrupts: { id?: string | null; value?: unknown }[]): PendingRequest[] {
  const out: PendingRequest[] = [];
  for (const { id, value } of interrupts) {
    const v = value as { action_requests?: { name: string; args: Record<string, unknown>; description?: string }[]; review_configs?: { action_name: string; allowed_decisions: string[] }[] } | null;
    const actions = (v?.action_requests ?? []).map((request, i): PendingAction => {
      const config = v?.review_configs?.[i] ?? v?.review_configs?.find((c) => c.action_name === request.name);
      return { name: request.name, args: request.args ?? {}, description: request.description, allowed: config?.allowed_decisions ?? ['approve', 'edit', 'reject', 'respond'] };
    });
    if (actions.length > 0) out.push({ id: id ?? null, actions });
  }
  return out;
}

/** An agent id, or the id of the one agent of the workspace with this exact name. */
export async function resolveAgentId(client: HangarClient, agent: string): Promise<string> {
  if (UUID.test(agent)) return agent;
  const res = await client.GET('/v1/deepagents/agents', { params: { query: { name: agent, page_size: 100 } } });
  if (!res.data) throw new ChatError(`could not list agents: ${describeError(res.error)}`);
  const match = res.data.items.filter((a) => a.name === agent);
  if (match.length !== 1) throw new ChatError(match.length === 0 ? `no agent named "${agent}"` : `several agents are named "${agent}"; use the id`);
  return match[0]!.id;
}


/** The id of the one agent named `name` (exact match); an error naming the problem otherwise. */
export function agentIdByName(client: HangarClient, name: string): Promise<string> {
  return resolveAgentId(client, name);
}
