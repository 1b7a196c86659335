// Real model providers as people use them: a saved model configuration whose `base_url` points at a
// provider, here a stand-in built in the test suite (test/fixtures/model-providers.ts) speaking the
// OpenAI chat-completions API and the Anthropic messages API. Whatever the provider does (a bad key,
// rate limits, an outage, an unknown model, a hang before headers, a stall mid-stream, malformed
// output), every run ends within Hangar's own short limits with an error code naming the cause, and
// its thread takes the next message.
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat } from '../../src/cli/chat.js';
import { collect, type SseEvent } from '../../src/client/stream.js';
import { startProviderStandIn, type ProviderStandIn } from '../fixtures/model-providers.js';
import { spawnHangar } from '../support/cli.js';
import { startBearerToolServer, type ToolServerFixture } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastValues, start } from './support.js';

const KEY = 'sk-provider-test-key-0123456789abcdef';
const TOOL_TOKEN = 'tool-server-secret-providers';
let server: TestServer;
let provider: ProviderStandIn;
let tools: ToolServerFixture;

beforeAll(async () => {
  [server, provider, tools] = await Promise.all([
    startTestServer({
      env: {
        // Short limits so that every failure shows within a second or so.
        HANGAR_MODEL_CALL_TIMEOUT_MS: '4000',
        HANGAR_MODEL_IDLE_TIMEOUT_MS: '400',
        HANGAR_MODEL_MAX_RETRIES: '1',
      },
    }),
    startProviderStandIn(),
    startBearerToolServer(TOOL_TOKEN),
  ]);
  const registered = await server.client.POST('/v1/deepagents/mcp-servers', {
    body: { name: 'adder', url: tools.url, headers: [{ key: 'Authorization', value: `Bearer ${TOOL_TOKEN}` }] },
  });
  expect(registered.response.status).toBe(201);
});
afterAll(async () => {
  await Promise.all([server?.close(), provider?.close(), tools?.close()]);
});

/** A saved model configuration pointing at the stand-in, and an agent using it. */
async function agentOn(
  api: 'openai' | 'anthropic',
  model: string,
  extra: { tools?: boolean; runTimeoutSeconds?: number; apiKey?: string } = {},
): Promise<{ agentId: string; configId: string }> {
  const name = `${api}-${model}-${Math.random().toString(36).slice(2, 8)}`;
  const config = await server.client.POST('/v1/deepagents/model-configs', {
    body: { name, model_id: `${api}:${model}`, parameters: { base_url: api === 'openai' ? provider.openaiUrl : provider.anthropicUrl }, api_key: extra.apiKey ?? KEY },
  });
  expect(config.response.status).toBe(201);
  const agentId = await createAgent(server, {
    runtime: { model: { model_id: name }, ...(extra.runTimeoutSeconds ? { run_timeout_seconds: extra.runTimeoutSeconds } : {}) },
    ...(extra.tools ? { tools: { tools: [{ name: 'add', mcp_server_url: tools.url }] } } : {}),
  });
  return { agentId, configId: config.data!.id };
}

/** Send one message on the thread (it must be accepted) and return the run's events and record. */
async function send(threadId: string, agentId: string, text: string) {
  const stream = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: text }], stream_mode: ['messages-tuple', 'values', 'updates'] });
  expect(stream.status, JSON.stringify(stream.error)).toBe(200);
  const events = await collect(stream);
  const record = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
  return { events, run: record.data! };
}

function errorEvent(events: SseEvent[]): { code?: string; error: string; message: string } | undefined {
  return events.find((e) => e.event === 'error')?.data as { code?: string; error: string; message: string } | undefined;
}

/** Text of the last AI message (a string from OpenAI, text blocks from Anthropic). */
function lastAiText(values: Record<string, unknown>): string {
  const ai = (values.messages as { type: string; content: unknown }[]).filter((m) => m.type === 'ai').at(-1)!;
  if (typeof ai.content === 'string') return ai.content;
  return (ai.content as { type: string; text?: string }[]).map((b) => (b.type === 'text' ? (b.text ?? '') : '')).join('');
}

function streamedText(events: SseEvent[]): string {
  return events
    .filter((e) => e.event === 'messages')
    .map((e) => (e.data as [{ type: string; content: unknown }])[0])
    .filter((m) => m.type === 'AIMessageChunk')
    .map((m) => (typeof m.content === 'string' ? m.content : (m.content as { text?: string }[]).map((b) => b.text ?? '').join('')))
    .join('');
}

describe.each(['openai', 'anthropic'] as const)('a %s provider', (api) => {
  it('streams tokens, tool-call fragments and exact usage, with the key and only the fields the provider expects', async () => {
    const { agentId } = await agentOn(api, 'ok', { tools: true });
    const threadId = await createThread(server, agentId);
    const before = provider.requestsFor('ok').length;
    const { events, run } = await send(threadId, agentId, 'What is 2 + 40?');
    expect(errorEvent(events)).toBeUndefined();
    expect(run.status).toBe('success');
    expect(lastAiText(lastValues(events))).toBe('The tool said: 42');
    expect(tools.calls.at(-1)).toEqual({ name: 'add', args: { a: 2, b: 40 } });
    // Tokens arrived as they were streamed, and the tool call's arguments in fragments.
    expect(streamedText(events)).toContain('The tool said: 42');
    const fragments = events
      .filter((e) => e.event === 'messages')
      .flatMap((e) => ((e.data as [{ tool_call_chunks?: { args?: string }[] }])[0].tool_call_chunks ?? []).map((c) => c.args ?? ''));
    expect(fragments.filter((f) => f !== '').length).toBeGreaterThanOrEqual(2);
    expect(fragments.join('')).toBe('{"a": 2, "b": 40}');
    // Usage: the provider's counts, twice (one call asked for the tool, one answered). LangChain's
    // Anthropic client adds the `output_tokens: 1` of `message_start` to the final count of
    // `message_delta` (an upstream quirk, reported as is): 2 × (9 + 1).
    expect(run.metadata.usage).toMatchObject({ input_tokens: 34, output_tokens: api === 'openai' ? 18 : 20 });

    const sent = provider.requestsFor('ok').slice(before);
    expect(sent).toHaveLength(2);
    for (const request of sent) {
      expect(request.body.stream).toBe(true);
      if (api === 'openai') expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
      else expect(request.headers['x-api-key']).toBe(KEY);
      // No participant names (strict OpenAI-compatible servers refuse them).
      for (const message of request.body.messages as Record<string, unknown>[]) expect(message).not.toHaveProperty('name');
    }
    expect(server.logs()).not.toContain(KEY);
  });

  it('retries one 429 (Retry-After) and one 500 invisibly', async () => {
    for (const model of ['rate-limited-once', 'error-500-once']) {
      const { agentId } = await agentOn(api, model);
      const threadId = await createThread(server, agentId);
      const { events, run } = await send(threadId, agentId, 'hi');
      expect(errorEvent(events), model).toBeUndefined();
      expect(run.status).toBe('success');
      expect(lastAiText(lastValues(events))).toBe('Hello from the stand-in.');
    }
  });

  it('a provider nobody listens at ends the run with model_unavailable', async () => {
    const name = `${api}-down-${Math.random().toString(36).slice(2, 8)}`;
    // Port 1 on loopback: nothing listens there, the connection is refused.
    await server.client.POST('/v1/deepagents/model-configs', { body: { name, model_id: `${api}:ok`, parameters: { base_url: 'http://127.0.0.1:1/v1' }, api_key: KEY } });
    const agentId = await createAgent(server, { runtime: { model: { model_id: name } } });
    const threadId = await createThread(server, agentId);
    const { events, run } = await send(threadId, agentId, 'hi');
    expect(errorEvent(events)).toMatchObject({ code: 'model_unavailable' });
    expect(run.status).toBe('error');
  });

  it('a key the provider repeats in its error page is in none of the run’s error, events, record, trace or logs', async () => {
    // A key of no shape Hangar recognises (hex, as Azure's are), so only knowing it can take it out.
    const key = `${api}0f3a9c7e51b2d84f6a0c3e9b7d15f2a8`;
    const { agentId } = await agentOn(api, 'echo-key', { apiKey: key });
    const threadId = await createThread(server, agentId);
    const { events, run } = await send(threadId, agentId, 'hi');
    expect(errorEvent(events)).toMatchObject({ code: 'model_unavailable' });
    expect(errorEvent(events)!.message).toContain('upstream refused credential [redacted]');
    expect(provider.requestsFor('echo-key').length).toBeGreaterThan(0);
    expect(JSON.stringify(events)).not.toContain(key);
    expect(JSON.stringify(run)).not.toContain(key);
    let traced = '';
    for (let i = 0; i < 100 && !traced.includes('credential'); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 50));
      traced = JSON.stringify((await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: run.run_id } } })).data);
    }
    expect(traced).toContain('credential [redacted]');
    expect(traced).not.toContain(key);
    expect(server.logs()).not.toContain(key);
  });

  it('a stream that ends half-way fails the run; the half tool call is not made', async () => {
    const { agentId } = await agentOn(api, 'cut', { tools: true });
    const threadId = await createThread(server, agentId);
    const callsBefore = tools.calls.length;
    const { events, run } = await send(threadId, agentId, 'What is 2 + 40?');
    expect(provider.requestsFor('cut').at(-1)!.body.stream).toBe(true);
    expect(errorEvent(events)).toMatchObject({ code: 'model_bad_response' });
    expect(errorEvent(events)!.message).toContain('stream ended before its answer was complete');
    expect(run.status).toBe('error');
    // Not `add({"a": 2, "b": 4})`, what the arguments said when the stream stopped.
    expect(tools.calls.slice(callsBefore)).toEqual([]);
  });

  it.each([
    ['unauthorized', 'model_auth_failed'],
    ['rate-limited', 'model_rate_limited'],
    ['error-500', 'model_unavailable'],
    ['unknown-model', 'model_not_found'],
    ['hang', 'model_timeout'],
    ['stall', 'model_timeout'],
    ['malformed', 'model_bad_response'],
  ])('a provider answering "%s" ends the run with %s, and the thread takes the next message', async (model, code) => {
    const { agentId, configId } = await agentOn(api, model);
    const threadId = await createThread(server, agentId);
    const { events, run } = await send(threadId, agentId, 'hi');
    const error = errorEvent(events);
    expect(error, JSON.stringify(events.at(-1))).toMatchObject({ code });
    expect(run.status).toBe('error');
    expect(run.error).toMatchObject({ code, error: error!.error, message: error!.message });
    // A message for people: no stack, no server path, no fragment of the key.
    expect(error!.message).not.toMatch(/\n\s+at |\/src\/|node_modules|sk-prov|0123456789/);
    expect(JSON.stringify(events)).not.toContain(KEY);
    // The trace keeps the error's type and message, never a stack trace or a path of the server. (An
    // aborted model call reports its end a moment after the run settles: wait for it, boundedly.)
    let traced = '';
    for (let i = 0; i < 100 && !/"error":"[A-Za-z]+: /.test(traced); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 50));
      const trace = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: run.run_id } } });
      expect(trace.response.status).toBe(200);
      traced = JSON.stringify(trace.data);
    }
    expect(traced).toMatch(/"error":"[A-Za-z]+: /);
    expect(traced).not.toMatch(/\\n\s+at |node_modules|\/src\/runtime|file:\/\//);
    expect(traced).not.toContain(KEY);

    // The thread is free: point the configuration at a provider that works and talk on.
    const fixed = await server.client.PATCH('/v1/deepagents/model-configs/{model_config_id}', {
      params: { path: { model_config_id: configId } },
      body: { model_id: `${api}:ok` },
    });
    expect(fixed.response.status).toBe(200);
    const next = await send(threadId, agentId, 'hi again');
    expect(errorEvent(next.events)).toBeUndefined();
    expect(lastAiText(lastValues(next.events))).toBe('Hello from the stand-in.');
  });
});

describe('a provider answering with no message at all', () => {
  it('ends the run with model_bad_response, streamed or not, rather than an internal TypeError', async () => {
    const { agentId } = await agentOn('openai', 'empty');
    for (const streamMode of [['messages-tuple', 'values'], ['values']] as const) {
      const threadId = await createThread(server, agentId);
      const stream = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'hi' }], stream_mode: [...streamMode] });
      const events = await collect(stream);
      const error = errorEvent(events);
      expect(error, streamMode.join()).toMatchObject({ code: 'model_bad_response' });
      expect(error!.message).toBe('the model provider answered with a malformed or empty response: its answer held no message (no choices)');
      expect(error!.message).not.toContain('Cannot read properties');
    }
    expect(provider.requestsFor('empty').map((r) => r.body.stream === true)).toEqual(expect.arrayContaining([true, false]));
  });

  it('a direct google-genai model with no key in the environment ends the run with model_auth_failed', async () => {
    const agentId = await createAgent(server, { runtime: { model: { model_id: 'google-genai:gemini-2.5-flash' } } });
    const threadId = await createThread(server, agentId);
    const { events, run } = await send(threadId, agentId, 'hi');
    expect(errorEvent(events)).toMatchObject({ code: 'model_auth_failed' });
    expect(run.status).toBe('error');
  });
});

describe('hangar chat', () => {
  it('prints the error code and message plainly, and the same thread takes the next message', async () => {
    const { agentId, configId } = await agentOn('openai', 'stall');
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t) };
    const failed = await chat({ baseUrl: server.url, apiKey: server.adminKey, agent: agentId, message: 'hi' }, io).catch((e: Error) => e);
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).message).toMatch(/^the run failed \(model_timeout\); the thread [0-9a-f-]{36} takes the next message \(--thread [0-9a-f-]{36}\)$/);
    expect(err.join('')).toMatch(/^error: model_timeout: the model provider's stream stalled/m);
    // What went wrong is said once: the `error:` line has it, the closing failure only what to do next.
    expect(`${err.join('')}hangar: ${(failed as Error).message}\n`.match(/stream stalled/g)).toHaveLength(1);
    const threadId = /--thread ([0-9a-f-]{36})/.exec((failed as Error).message)![1]!;
    await server.client.PATCH('/v1/deepagents/model-configs/{model_config_id}', { params: { path: { model_config_id: configId } }, body: { model_id: 'openai:ok' } });
    out.length = 0;
    await chat({ baseUrl: server.url, apiKey: server.adminKey, agent: agentId, thread: threadId, message: 'hi again' }, io);
    expect(out.join('')).toBe('Hello from the stand-in.\n');
  });
});

describe('standard output', () => {
  it('carries only JSON: what a provider client prints on malformed output becomes a log line', async () => {
    const { agentId } = await agentOn('openai', 'malformed');
    const threadId = await createThread(server, agentId);
    const { run } = await send(threadId, agentId, 'hi');
    expect(run.error).toMatchObject({ code: 'model_bad_response' });
    const lines = server.logs().split('\n').filter((l) => l.trim() !== '');
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    const printed = lines.map((l) => JSON.parse(l) as { component?: string; msg?: string }).filter((l) => l.component === 'console');
    expect(printed.some((l) => l.msg?.includes('Could not parse message into JSON'))).toBe(true);
    // The failure's details (stack included) are in the log at debug level, beside the warning.
    expect(lines.some((l) => l.includes('run failure details') && l.includes(run.run_id))).toBe(true);
  });
});

describe('the run time limit', () => {
  it('an agent over its run_timeout_seconds ends with status timeout and run_timeout; the thread takes the next message', async () => {
    const slow = await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow-scripted', model_id: 'scripted:slow', parameters: { delay_ms: 60_000 } } });
    expect(slow.response.status).toBe(201);
    const agentId = await createAgent(server, { runtime: { model: { model_id: 'slow-scripted' }, run_timeout_seconds: 1 } });
    const agent = await server.client.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId } } });
    expect(agent.data!.runtime).toEqual({ model: { model_id: 'slow-scripted' }, run_timeout_seconds: 1 });
    const threadId = await createThread(server, agentId);
    const { events, run } = await send(threadId, agentId, 'hi');
    expect(errorEvent(events)).toMatchObject({ code: 'run_timeout', error: 'RunTimeout' });
    expect(run.status).toBe('timeout');
    expect(run.error).toMatchObject({ code: 'run_timeout' });
    const thread = await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadId } } });
    expect(thread.data!.status).toBe('error');

    await server.client.PATCH('/v1/deepagents/model-configs/{model_config_id}', { params: { path: { model_config_id: slow.data!.id } }, body: { parameters: { delay_ms: 0 } } });
    const next = await send(threadId, agentId, 'hi again');
    expect(next.run.status).toBe('success');
  });

  it('refuses a run time limit that is not a positive number of seconds', async () => {
    const res = await server.client.POST('/v1/deepagents/agents', {
      body: { name: 'bad-limit', runtime: { model: { model_id: 'scripted:demo' }, run_timeout_seconds: -5 } },
    });
    expect(res.response.status).toBe(422);
    expect(JSON.stringify(res.error)).toContain('run_timeout_seconds');
  });
});

describe('time limits longer than a timer can wait', () => {
  it('stop `hangar serve` at start with a message naming each, instead of ending every run or command at once', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-limits-'));
    // 25 days: past Node's longest timer (2^31 - 1 ms), which would fire after 1 ms.
    const serve = spawnHangar(['serve', '--data-dir', dataDir, '--port', '0', '--host', '127.0.0.1'], {
      HANGAR_RUN_TIMEOUT_MS: String(25 * 24 * 3600 * 1000),
      HANGAR_MODEL_CALL_TIMEOUT_MS: String(25 * 24 * 3600 * 1000),
      HANGAR_SANDBOX_TIMEOUT_SECONDS: String(25 * 24 * 3600),
    });
    // Whichever comes first: the refusal (the process exits) or a server that started anyway.
    const started = await serve.waitFor(/Hangar is listening/).then(
      () => true,
      () => false,
    );
    if (started) {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
    expect(started).toBe(false);
    const bad = { code: await serve.exited, stderr: serve.output() };
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/HANGAR_RUN_TIMEOUT_MS: must be at most 2147483647 ms/);
    expect(bad.stderr).toMatch(/HANGAR_MODEL_CALL_TIMEOUT_MS: must be at most 2147483647 ms/);
    expect(bad.stderr).toMatch(/HANGAR_SANDBOX_TIMEOUT_SECONDS: must be at most 2147483 seconds/);
  });
});
