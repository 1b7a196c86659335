// Differential: the official `@langchain/langgraph-sdk` Client drives the LangGraph JS server
// (@langchain/langgraph-api, `bench/peer/`, the same deep agent) and Hangar with the same call
// sequences, and compares what a client would notice: status codes, the keys and types of answers,
// stream event names and their order. The peer starts in about 5 s (`node --import tsx`).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent } from '../runtime/support.js';
import { INSTRUCTIONS } from '../../bench/peer/agent.js';
import { human } from './sdk-support.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface Target {
  name: 'peer' | 'hangar';
  client: Client;
  /** The fast agent's assistant id, and the slow one's (40 ms a token). */
  agent: string;
  slow: string;
}

let peerProcess: ChildProcess | undefined;
let server: TestServer;
let peer: Target;
let hangar: Target;

async function startPeer(): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/peer/server.ts'], {
    cwd: ROOT,
    env: { ...process.env, PEER_WORKERS: '4', LOG_LEVEL: 'error' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  peerProcess = child;
  return new Promise<string>((resolve, reject) => {
    let output = '';
    const onData = (data: Buffer) => {
      output += String(data);
      const match = /PEER_URL (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`peer exited ${code}: ${output}`)));
  });
}

beforeAll(async () => {
  const [peerUrl, started] = await Promise.all([startPeer(), startTestServer()]);
  server = started;
  peer = { name: 'peer', client: new Client({ apiUrl: peerUrl, callerOptions: { maxRetries: 0 } }), agent: 'agent', slow: 'slow' };
  const agent = await createAgent(server, { instructions: INSTRUCTIONS, runtime: { model: { model_id: 'scripted:bench' } } });
  await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow', model_id: 'scripted:bench', parameters: { delay_ms: 40 } } });
  const slow = await createAgent(server, { instructions: INSTRUCTIONS, runtime: { model: { model_id: 'slow' } } });
  hangar = {
    name: 'hangar',
    client: new Client({ apiUrl: `${server.url}/v1/deepagents`, defaultHeaders: { 'X-Api-Key': server.adminKey }, callerOptions: { maxRetries: 0 } }),
    agent,
    slow,
  };
});
afterAll(async () => {
  if (peerProcess && peerProcess.exitCode === null) {
    const exited = new Promise((resolve) => peerProcess!.once('exit', resolve));
    peerProcess.kill('SIGTERM');
    await exited;
  }
  await server?.close();
});

/** What a client sees of a value: object keys and value types, recursively (arrays by their first element). */
function shape(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? [] : [shape(value[0])];
  if (typeof value === 'object') return Object.fromEntries(Object.keys(value as object).map((k) => [k, shape((value as Record<string, unknown>)[k])]));
  return typeof value;
}

/**
 * Where Hangar's answer lacks a key the LangGraph server's has, or has another type there (keys only
 * Hangar has are not listed: a client written for LangGraph does not read them).
 */
function differences(peerShape: unknown, hangarShape: unknown, at = '$'): string[] {
  if (typeof peerShape === 'string' || typeof hangarShape === 'string' || Array.isArray(peerShape) !== Array.isArray(hangarShape)) {
    return JSON.stringify(peerShape) === JSON.stringify(hangarShape) ? [] : [`${at}: ${JSON.stringify(peerShape)} on LangGraph, ${JSON.stringify(hangarShape)} on Hangar`];
  }
  if (Array.isArray(peerShape)) return peerShape.length === 0 || (hangarShape as unknown[]).length === 0 ? [] : differences(peerShape[0], (hangarShape as unknown[])[0], `${at}[]`);
  const hangarObject = hangarShape as Record<string, unknown>;
  return Object.entries(peerShape as Record<string, unknown>).flatMap(([key, value]) =>
    key in hangarObject ? differences(value, hangarObject[key], `${at}.${key}`) : [`${at}.${key}: missing on Hangar`],
  );
}

/** Differences a client does not notice, or that Hangar documents (docs/clients.md), by path. */
const ALLOWED: [RegExp, string][] = [
  [/\.metadata\.[^.]+: missing on Hangar$/, 'run, assistant and checkpoint metadata are each server’s own bookkeeping (user agent, plan, host, created_by…)'],
  [/\.kwargs: missing on Hangar$/, 'a run’s kwargs are the LangGraph server’s internal record of the request (not in the SDK’s Run type)'],
  [/\.config: missing on Hangar$/, 'a thread’s `config` is optional in the SDK’s Thread type; Hangar threads have none'],
  [/\.files: missing on Hangar$/, 'a state channel nothing wrote yet: LangGraph JS shows its default, LangGraph Python (and Hangar) omit it'],
  [/\.FilesystemMiddleware\.before_agent: \{\} on LangGraph, "null" on Hangar$/, 'a node that returned nothing: `null` as LangGraph Python sends it'],
];

function unexplained(peerValue: unknown, hangarValue: unknown): string[] {
  return differences(shape(peerValue), shape(hangarValue)).filter((d) => !ALLOWED.some(([pattern]) => pattern.test(d)));
}

/** The status of what `promise` rejects with (the SDK's HTTPError), 200 when it resolves. */
async function status(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (error) {
    return (error as { status?: number }).status ?? -1;
  }
}

/** Event names of a stream, consecutive repeats folded into one. */
async function eventNames(stream: AsyncIterable<{ event: string }>): Promise<string[]> {
  const names: string[] = [];
  for await (const chunk of stream) if (names.at(-1) !== chunk.event) names.push(chunk.event);
  return names;
}

/** The first chunk of each event of a stream. */
async function firstOfEach(stream: AsyncIterable<{ event: string; data: unknown }>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for await (const chunk of stream) out[chunk.event] ??= chunk.data;
  return out;
}

/** Run the same sequence on both servers at once. */
async function both<T>(sequence: (t: Target) => Promise<T>): Promise<{ peer: T; hangar: T }> {
  const [a, b] = await Promise.all([sequence(peer), sequence(hangar)]);
  return { peer: a, hangar: b };
}

/** Expect both sides' answers to have the same keys and types (but for ALLOWED). */
function expectSameShape(label: string, r: { peer: unknown; hangar: unknown }): void {
  expect({ label, differences: unexplained(r.peer, r.hangar) }).toEqual({ label, differences: [] });
}

const TOOL_CALL = '/call ls {"path": "/"}';
const LONG = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');

/** Start a slow run and return its id once it streams model output (its input is in the state by then). */
async function startSlow(t: Target, threadId: string): Promise<string> {
  let runId = '';
  let seen = 0;
  for await (const chunk of t.client.runs.stream(threadId, t.slow, { ...human(LONG), streamMode: ['messages-tuple'] })) {
    if (chunk.event === 'metadata') runId = (chunk.data as { run_id: string }).run_id;
    if (chunk.event === 'messages' && ++seen === 3) break;
  }
  return runId;
}

describe('the LangGraph SDK against the LangGraph server and Hangar', () => {
  it('assistants: search, get, getGraph, getSchemas, getSubgraphs, count, an unknown one', async () => {
    const r = await both(async (t) => {
      const found = await t.client.assistants.search({ limit: 10 });
      const id = t.name === 'peer' ? (await t.client.assistants.search({ graphId: t.agent }))[0]!.assistant_id : t.agent;
      const graph = await t.client.assistants.getGraph(id);
      const schemas = await t.client.assistants.getSchemas(id);
      return {
        found: found[0],
        got: await t.client.assistants.get(id),
        graph: { nodes: graph.nodes[0], edges: graph.edges[0] },
        xray: Object.keys(await t.client.assistants.getGraph(id, { xray: true })),
        schemas: Object.keys(schemas).filter((k) => (schemas as unknown as Record<string, unknown>)[k] !== undefined),
        subgraphs: await t.client.assistants.getSubgraphs(id),
        count: await t.client.assistants.count(),
        missing: await status(t.client.assistants.get('00000000-0000-0000-0000-000000000000')),
        byGraph: (await t.client.assistants.search({ graphId: t.agent })).length,
        paged: (await t.client.assistants.search({ limit: 1, offset: 1 })).length,
        byName: await status(t.client.assistants.search({ sortBy: 'name', sortOrder: 'asc' })),
        byOtherMetadata: (await t.client.assistants.search({ metadata: { nope: 1 } })).length,
        countByOtherMetadata: await t.client.assistants.count({ metadata: { nope: 1 } }),
      };
    });
    expectSameShape('assistants', r);
    const pick = (x: typeof r.peer) => ({ missing: x.missing, byGraph: x.byGraph, paged: x.paged, byName: x.byName, byOtherMetadata: x.byOtherMetadata, countByOtherMetadata: x.countByOtherMetadata });
    expect(pick(r.hangar)).toEqual(pick(r.peer));
    expect(r.hangar.schemas).toEqual(expect.arrayContaining(r.peer.schemas));
  });

  it('threads: create (metadata, ifExists), search (filters, sort, limit, offset), get, update, copy, delete', async () => {
    const r = await both(async (t) => {
      const tag = `tag-${Math.random()}`;
      const made = [];
      for (let i = 0; i < 3; i++) made.push(await t.client.threads.create({ metadata: { tag, i } }));
      const id = made[0]!.thread_id;
      return {
        made: made[0],
        again: await status(t.client.threads.create({ threadId: id })),
        raise: await status(t.client.threads.create({ threadId: id, ifExists: 'raise' })),
        doNothing: await t.client.threads.create({ threadId: id, ifExists: 'do_nothing' }),
        all: (await t.client.threads.search({ metadata: { tag } })).length,
        page: (await t.client.threads.search({ metadata: { tag }, limit: 2, offset: 1, sortBy: 'created_at', sortOrder: 'asc' })).map((x) => (x.metadata as { i: number }).i),
        desc: (await t.client.threads.search({ metadata: { tag }, sortBy: 'created_at', sortOrder: 'desc' })).map((x) => (x.metadata as { i: number }).i),
        idle: (await t.client.threads.search({ metadata: { tag }, status: 'idle' })).length,
        busy: (await t.client.threads.search({ metadata: { tag }, status: 'busy' })).length,
        found: (await t.client.threads.search({ metadata: { tag }, limit: 1 }))[0],
        got: await t.client.threads.get(id),
        updated: await t.client.threads.update(id, { metadata: { more: 1 } }),
        copy: await t.client.threads.copy(id),
        deleted: await status(t.client.threads.delete(made[1]!.thread_id)),
        gone: await status(t.client.threads.get(made[1]!.thread_id)),
        unknown: await status(t.client.threads.get('00000000-0000-0000-0000-000000000000')),
      };
    });
    expectSameShape('threads', r);
    const { made: _m, doNothing: _d, found: _f, got: _g, updated: _u, copy: _c, ...values } = r.peer;
    const { made: _m2, doNothing: _d2, found: _f2, got: _g2, updated: _u2, copy: _c2, ...hangarValues } = r.hangar;
    expect(hangarValues).toEqual(values);
  });

  it('state and history: getState (now and at a checkpoint), getHistory (limit, before, checkpoint, metadata), updateState', async () => {
    const r = await both(async (t) => {
      const thread = await t.client.threads.create();
      await t.client.runs.wait(thread.thread_id, t.agent, human('hi'));
      await t.client.runs.wait(thread.thread_id, t.agent, human(TOOL_CALL));
      const state = await t.client.threads.getState(thread.thread_id);
      const history = await t.client.threads.getHistory(thread.thread_id, { limit: 100 });
      const newest = history[0]!.checkpoint.checkpoint_id!;
      const older = history[1]!.checkpoint.checkpoint_id!;
      const lastRun = (history[0]!.metadata as { run_id: string }).run_id;
      // The LangGraph JS server takes `before` as a checkpoint id (the SDK types it as a config).
      const before = await t.client.threads.getHistory(thread.thread_id, { limit: 100, before: newest as never });
      const atCheckpoint = await t.client.threads.getHistory(thread.thread_id, { checkpoint: { checkpoint_id: older } });
      const byRun = await t.client.threads.getHistory(thread.thread_id, { limit: 100, metadata: { run_id: lastRun } });
      const atId = await t.client.threads.getState(thread.thread_id, older);
      const atObject = await t.client.threads.getState(thread.thread_id, { checkpoint_id: older } as never);
      const update = await t.client.threads.updateState(thread.thread_id, { values: { messages: [{ type: 'human', content: 'noted' }] } });
      const afterUpdate = await t.client.threads.getState(thread.thread_id);
      return {
        state,
        entry: history[0],
        one: (await t.client.threads.getHistory(thread.thread_id, { limit: 1 })).length,
        before: { some: before.length > 0, allOlder: before.every((s) => s.checkpoint.checkpoint_id! < newest) },
        atCheckpoint: atCheckpoint.map((s) => s.checkpoint.checkpoint_id === older),
        byRun: { some: byRun.length > 0, all: byRun.every((s) => (s.metadata as { run_id: string }).run_id === lastRun), newestFirst: byRun[0]?.checkpoint.checkpoint_id === newest },
        atId: { shape: atId, same: atId.checkpoint.checkpoint_id === older, values: atId.values },
        atObject: atObject.checkpoint.checkpoint_id === older,
        update,
        grew: (afterUpdate.values as { messages: unknown[] }).messages.length - (state.values as { messages: unknown[] }).messages.length,
      };
    });
    expectSameShape('state and history', r);
    for (const key of ['one', 'before', 'atCheckpoint', 'byRun', 'atObject', 'grew'] as const) expect({ key, value: r.hangar[key] }).toEqual({ key, value: r.peer[key] });
    expect(r.hangar.atId.same).toBe(true);
    expect(r.peer.atId.same).toBe(true);
  });

  it('streams: event names and their order for each served streamMode, several at once, and with streamSubgraphs', async () => {
    const r = await both(async (t) => {
      const out: Record<string, string[]> = {};
      for (const mode of ['values', 'updates', 'messages-tuple', 'custom'] as const) {
        const thread = await t.client.threads.create();
        out[mode] = await eventNames(t.client.runs.stream(thread.thread_id, t.agent, { ...human(TOOL_CALL), streamMode: [mode] }));
      }
      const modes = ['values', 'updates', 'messages-tuple'] as ('values' | 'updates' | 'messages-tuple')[];
      let thread = await t.client.threads.create();
      out.several = await eventNames(t.client.runs.stream(thread.thread_id, t.agent, { ...human(TOOL_CALL), streamMode: modes }));
      thread = await t.client.threads.create();
      // The LangGraph JS server adds `checkpoints` events to a subgraph stream that did not ask for them.
      out.subgraphs = (await eventNames(t.client.runs.stream(thread.thread_id, t.agent, { ...human(TOOL_CALL), streamMode: modes, streamSubgraphs: true }))).filter((e, i, all) => e !== 'checkpoints' && all[i - 1] !== e);
      out.subgraphs = out.subgraphs.filter((e, i, all) => all[i - 1] !== e);
      thread = await t.client.threads.create();
      const chunks = await firstOfEach(t.client.runs.stream(thread.thread_id, t.agent, { ...human(TOOL_CALL), streamMode: modes }));
      return { names: out, chunks };
    });
    expect(r.hangar.names).toEqual(r.peer.names);
    expectSameShape('stream chunks', { peer: r.peer.chunks, hangar: r.hangar.chunks });
  });

  it('runs: create, get, list by status, join, joinStream (lastEventId), wait, cancel with wait, ifNotExists', async () => {
    const r = await both(async (t) => {
      const thread = await t.client.threads.create();
      const run = await t.client.runs.create(thread.thread_id, t.agent, { ...human(TOOL_CALL), streamMode: ['values'], streamResumable: true });
      const joined = await t.client.runs.join(thread.thread_id, run.run_id);
      // Join a live run's stream, leave after two events, and join again after the last one seen.
      const liveThread = await t.client.threads.create();
      const live = await t.client.runs.create(liveThread.thread_id, t.slow, { ...human('one two three four five six seven eight'), streamMode: ['values', 'messages-tuple'], streamResumable: true });
      const ids: string[] = [];
      const events: string[] = [];
      for await (const chunk of t.client.runs.joinStream(liveThread.thread_id, live.run_id) as AsyncIterable<{ event: string; id?: string }>) {
        events.push(chunk.event);
        if (chunk.id) ids.push(chunk.id);
        if (ids.length === 2) break;
      }
      const afterLast = await eventNames(t.client.runs.joinStream(liveThread.thread_id, live.run_id, { lastEventId: ids[1] }) as AsyncIterable<{ event: string }>);
      const listed = await t.client.runs.list(thread.thread_id);
      const slowThread = await t.client.threads.create();
      const slow = await startSlow(t, slowThread.thread_id);
      const running = (await t.client.runs.list(slowThread.thread_id, { status: 'running' })).map((x) => x.run_id);
      const cancelled = await status(t.client.runs.cancel(slowThread.thread_id, slow, true));
      return {
        run,
        got: await t.client.runs.get(thread.thread_id, run.run_id),
        joined,
        events: events.filter((e, i) => events[i - 1] !== e),
        afterLast,
        listed: listed[0],
        count: listed.length,
        running,
        succeeded: (await t.client.runs.list(thread.thread_id, { status: 'success' })).map((x) => x.run_id).includes(run.run_id),
        cancelled,
        afterCancel: (await t.client.runs.get(slowThread.thread_id, slow)).status,
        waited: await t.client.runs.wait(thread.thread_id, t.agent, human('hi')),
        created: await status(t.client.runs.wait(crypto.randomUUID(), t.agent, { ...human('hi'), ifNotExists: 'create' })),
        unknownRun: await status(t.client.runs.get(thread.thread_id, '00000000-0000-0000-0000-000000000000')),
      };
    });
    expectSameShape('runs', r);
    // After the last event seen, both go on to the model's tokens and the final values (the LangGraph JS
    // server drops the `values` events sent while no client was joined; Hangar resends them).
    expect(r.peer.afterLast.slice(-2)).toEqual(['messages', 'values']);
    expect(r.hangar.afterLast.slice(-2)).toEqual(['messages', 'values']);
    // The first events of a join depend on how far the live run had got when the join began (a
    // join before its first token sees `metadata` and `values` first on Hangar): each side's are
    // events of the run, not compared to the other's (a CI run under load saw them differ).
    for (const side of [r.peer, r.hangar]) expect(side.events.every((e) => ['metadata', 'values', 'messages'].includes(e))).toBe(true);
    const pick = (x: typeof r.peer) => ({ count: x.count, running: x.running.length, succeeded: x.succeeded, cancelled: x.cancelled, afterCancel: x.afterCancel, created: x.created, unknownRun: x.unknownRun, strategy: x.run.multitask_strategy });
    expect(pick(r.hangar)).toEqual(pick(r.peer));
  });

  it('runs on a busy thread: multitaskStrategy interrupt, rollback and enqueue', async () => {
    const r = await both(async (t) => {
      const out: Record<string, unknown> = {};
      for (const strategy of ['interrupt', 'rollback', 'enqueue'] as const) {
        const thread = await t.client.threads.create();
        const first = { run_id: await startSlow(t, thread.thread_id) };
        const second = await t.client.runs.create(thread.thread_id, t.slow, { ...human('next'), multitaskStrategy: strategy });
        await t.client.runs.join(thread.thread_id, second.run_id);
        const firstRun = await t.client.runs.get(thread.thread_id, first.run_id).then(
          (x) => x.status,
          (error: { status?: number }) => error.status,
        );
        const humans = ((await t.client.threads.getState(thread.thread_id)).values as { messages: { type: string; content: string }[] }).messages.filter((m) => m.type === 'human').map((m) => m.content);
        out[strategy] = { first: firstRun, second: (await t.client.runs.get(thread.thread_id, second.run_id)).status, strategy: second.multitask_strategy, humans: humans.map((h) => (h === LONG ? 'LONG' : h)) };
      }
      return out;
    });
    // LangGraph documents rollback as deleting the first run and what it wrote; the JS server keeps both
    // (the run as `error`). Hangar does as documented.
    expect(r.hangar.rollback).toEqual({ first: 404, second: 'success', strategy: 'rollback', humans: ['next'] });
    expect({ ...r.hangar, rollback: null }).toEqual({ ...r.peer, rollback: null });
  });

  it('the store: putItem, getItem, searchItems, listNamespaces, deleteItem', async () => {
    const r = await both(async (t) => {
      const namespace = [t.name === 'peer' ? crypto.randomUUID() : t.agent, 'memories'];
      const value = { content: 'x', created_at: '2026-01-01T00:00:00Z', modified_at: '2026-01-01T00:00:00Z' };
      const put = await t.client.store.putItem(namespace, '/k.md', value);
      const got = await t.client.store.getItem(namespace, '/k.md');
      const searched = await t.client.store.searchItems(namespace, { limit: 5 });
      const listed = await t.client.store.listNamespaces({ prefix: namespace, maxDepth: 2 });
      const deleted = await t.client.store.deleteItem(namespace, '/k.md');
      return { put: put ?? null, got, searched, listed: listed.namespaces.length, deleted: deleted ?? null, after: await t.client.store.getItem(namespace, '/k.md'), missing: await t.client.store.getItem(namespace, '/none.md') };
    });
    expectSameShape('store', r);
    expect({ ...r.hangar, got: r.hangar.got?.value, searched: r.hangar.searched.items.length }).toEqual({ ...r.peer, got: r.peer.got?.value, searched: r.peer.searched.items.length });
  });

  it('breakpoints: interruptBefore a node a Send starts (tools) and interruptAfter one; the state, the thread, wait, and input null', async () => {
    const r = await both(async (t) => {
      const thread = await t.client.threads.create();
      const names = await eventNames(t.client.runs.stream(thread.thread_id, t.agent, { ...human(TOOL_CALL), streamMode: ['values', 'updates'], interruptBefore: ['tools'] }));
      const got = await t.client.threads.get(thread.thread_id);
      const state = await t.client.threads.getState(thread.thread_id);
      const resumed = await t.client.runs.wait(thread.thread_id, t.agent, { input: null });
      const after = await t.client.threads.getState(thread.thread_id);
      const other = await t.client.threads.create();
      const waited = (await t.client.runs.wait(other.thread_id, t.agent, { ...human(TOOL_CALL), interruptAfter: ['model_request'] })) as Record<string, unknown>;
      const paused = await t.client.threads.getState(other.thread_id);
      return {
        names,
        status: got.status,
        interruptsByTask: Object.keys(got.interrupts).sort().join() === state.tasks.map((task) => task.id).sort().join(),
        next: state.next,
        tasks: state.tasks.map((task) => ({ name: task.name, error: task.error, interrupts: task.interrupts })),
        resumed: (resumed as { messages: { type: string }[] }).messages.map((m) => m.type),
        afterNext: after.next,
        waitedInterrupt: waited.__interrupt__,
        pausedNext: paused.next,
        twoCalls: await (async () => {
          const two = await t.client.threads.create();
          await t.client.runs.wait(two.thread_id, t.agent, { ...human(`${TOOL_CALL}\n/call glob {"pattern": "*"}`), interruptBefore: ['tools'] });
          const s = await t.client.threads.getState(two.thread_id);
          return { next: s.next, tasks: s.tasks.map((task) => task.name), distinct: new Set(s.tasks.map((task) => task.id)).size };
        })(),
      };
    });
    expect(r.hangar).toEqual(r.peer);
    expect(r.hangar.next).toEqual(['tools']);
  });

  it('where the two differ on purpose (docs/clients.md): reject on a busy thread, a run on a thread that does not exist', async () => {
    const r = await both(async (t) => {
      const thread = await t.client.threads.create();
      const first = await startSlow(t, thread.thread_id);
      const rejected = await status(t.client.runs.create(thread.thread_id, t.slow, { ...human('x'), multitaskStrategy: 'reject' }));
      await t.client.runs.join(thread.thread_id, first);
      return { rejected, noThread: await status(t.client.runs.wait(crypto.randomUUID(), t.agent, human('hi'))) };
    });
    expect(r).toEqual({ peer: { rejected: 422, noThread: 422 }, hangar: { rejected: 409, noThread: 404 } });
  });

  it('config.recursion_limit: a run that needs more steps fails, on the stream, the run, the thread and wait', async () => {
    const r = await both(async (t) => {
      const thread = await t.client.threads.create();
      const names = await eventNames(t.client.runs.stream(thread.thread_id, t.agent, { ...human(TOOL_CALL), streamMode: ['values'], config: { recursion_limit: 3 } }));
      const other = await t.client.threads.create();
      const waited = await status(t.client.runs.wait(other.thread_id, t.agent, { ...human(TOOL_CALL), config: { recursion_limit: 3 } }));
      const roomy = await t.client.threads.create();
      const enough = (await t.client.runs.wait(roomy.thread_id, t.agent, { ...human(TOOL_CALL), config: { recursion_limit: 50 } })) as { messages: unknown[] };
      return {
        names,
        run: (await t.client.runs.list(thread.thread_id))[0]!.status,
        thread: (await t.client.threads.get(thread.thread_id)).status,
        waited,
        enough: enough.messages.length,
        zero: await status(t.client.runs.wait(roomy.thread_id, t.agent, { ...human('hi'), config: { recursion_limit: 0 } })),
      };
    });
    // A limit of 0 is refused by Hangar (422 naming config.recursion_limit), where the LangGraph JS server starts a run that fails at once.
    expect(r.hangar.zero).toBe(422);
    expect({ ...r.hangar, zero: null }).toEqual({ ...r.peer, zero: null });
  });

  it('runs from a past checkpoint: edit an earlier message and the first one, as useStream does (firstSeenState.parent_checkpoint)', async () => {
    type Msgs = { messages?: { type: string; content: unknown }[] };
    const humans = (values: unknown) => ((values as Msgs).messages ?? []).filter((m) => m.type === 'human').map((m) => m.content);
    const r = await both(async (t) => {
      const thread = await t.client.threads.create();
      await t.client.runs.wait(thread.thread_id, t.agent, human('one'));
      await t.client.runs.wait(thread.thread_id, t.agent, human('two'));
      const firstSeen = async (content: string) => (await t.client.threads.getHistory(thread.thread_id, { limit: 100 })).findLast((s) => humans(s.values).includes(content))!;
      const fork = (await firstSeen('two')).parent_checkpoint!;
      const result = await t.client.runs.wait(thread.thread_id, t.agent, { ...human('two, edited'), checkpoint: fork });
        const root = (await firstSeen('one')).parent_checkpoint;
      const streamed = root ? await eventNames(t.client.runs.stream(thread.thread_id, t.agent, { ...human('one, edited'), checkpointId: root.checkpoint_id!, streamMode: ['values'] })) : [];
      const history = await t.client.threads.getHistory(thread.thread_id, { limit: 100 });
      return {
        result,
        humans: humans(result),
        // The fork point has two children now: the old branch's and the new one's.
        forkedFrom: history.filter((s) => s.parent_checkpoint?.checkpoint_id === fork.checkpoint_id).length >= 2,
        rootHasParent: root !== null,
        streamed,
        firstEdited: humans((await t.client.threads.getState(thread.thread_id)).values),
        // Both branches of the first edit stay in the history.
        branches: [...new Set(history.map((s) => humans(s.values)[0]).filter((h) => h !== undefined))].sort(),
        missing: await status(t.client.runs.wait(thread.thread_id, t.agent, { ...human('x'), checkpointId: '1f000000-0000-6000-8000-000000000000' })),
      };
    });
    expectSameShape('fork result', { peer: r.peer.result, hangar: r.hangar.result });
    const pick = (x: typeof r.peer) => ({ humans: x.humans, forkedFrom: x.forkedFrom, rootHasParent: x.rootHasParent, streamed: x.streamed, firstEdited: x.firstEdited, branches: x.branches });
    expect(pick(r.hangar)).toEqual(pick(r.peer));
    // A checkpoint the thread does not have: Hangar's 404 `checkpoint_not_found` (the JS server's answer differs).
    expect(r.hangar.missing).toBe(404);
  });

  it('stateless runs: runs.wait, runs.stream and runs.create without a thread; the thread is deleted, or kept', async () => {
    const r = await both(async (t) => {
      // The JS server's Content-Location of a stateless run names no thread; Hangar's does.
      let made: { thread_id?: string | undefined } = {};
      const gone = async () => (made.thread_id ? await status(t.client.threads.get(made.thread_id)) : 'unnamed');
      const waited = await t.client.runs.wait(null, t.agent, { ...human('hi'), onRunCreated: (m) => (made = m) });
      const waitedThread = await gone();
      made = {};
      const streamed = await eventNames(t.client.runs.stream(null, t.agent, { ...human(TOOL_CALL), streamMode: ['values', 'updates'], onRunCreated: (m) => (made = m) }));
      const streamedThread = await gone();
      const kept = await t.client.runs.create(null, t.agent, { ...human('keep'), onCompletion: 'keep' as never });
      const joined = await t.client.runs.join(kept.thread_id, kept.run_id);
      return { waited, waitedThread, streamed, streamedThread, kept, joined, keptThread: await status(t.client.threads.get(kept.thread_id)) };
    });
    const answers = (x: typeof r.peer) => ({ waited: x.waited, kept: x.kept, joined: x.joined });
    expectSameShape('stateless', { peer: answers(r.peer), hangar: answers(r.hangar) });
    const pick = (x: typeof r.peer) => ({ streamed: x.streamed, keptThread: x.keptThread });
    expect(pick(r.hangar)).toEqual(pick(r.peer));
    // Hangar names the temporary thread (so `onRunCreated` gets its id), and it is gone once the run has ended.
    expect([r.peer.waitedThread, r.peer.streamedThread]).toEqual(['unnamed', 'unnamed']);
    expect([r.hangar.waitedThread, r.hangar.streamedThread]).toEqual([404, 404]);
  });

  it('streamMode tasks: event names and order, and the shapes of a task start and its result', async () => {
    const r = await both(async (t) => {
      const thread = await t.client.threads.create();
      const chunks: { event: string; data: unknown }[] = [];
      for await (const chunk of t.client.runs.stream(thread.thread_id, t.agent, { ...human(TOOL_CALL), streamMode: ['tasks' as never] })) chunks.push(chunk);
      const tasks = chunks.filter((c) => c.event === 'tasks').map((c) => c.data as Record<string, unknown>);
      return {
        names: chunks.map((c) => c.event).filter((e, i, all) => all[i - 1] !== e),
        started: tasks.find((d) => 'input' in d),
        ended: tasks.find((d) => 'result' in d),
        order: tasks.map((d) => `${String(d.name)}:${'result' in d ? 'result' : 'start'}`),
      };
    });
    expect(r.hangar.names).toEqual(r.peer.names);
    expect(r.hangar.order).toEqual(r.peer.order);
    expectSameShape('task start', { peer: r.peer.started, hangar: r.hangar.started });
    expectSameShape('task result', { peer: { ...(r.peer.ended as object), result: null }, hangar: { ...(r.hangar.ended as object), result: null } });
  });
});
