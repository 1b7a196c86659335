// Export: OTLP/HTTP spans received and decoded by a real HTTP receiver, forwarding to a second Hangar's
// LangSmith-compatible API, and exporters that are dead or hung never slowing or failing ingestion.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runHangar } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, run } from '../runtime/support.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});
afterAll(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
  status?: { code?: number; message?: string };
}

/** An OTLP/HTTP JSON receiver; `spans` fills as exports arrive. */
async function otlpReceiver(options: { hang?: boolean } = {}) {
  const spans: OtlpSpan[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const requests: http.IncomingMessage[] = [];
  const server = http.createServer(async (req, res) => {
    requests.push(req);
    server.emit('export-request');
    if (options.hang) return; // never answers: a hung collector
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    expect(req.url).toBe('/v1/traces');
    expect(req.headers['content-type']).toContain('application/json');
    expect(req.headers['x-collector-key']).toBe('k1');
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: { resource: { attributes: OtlpSpan['attributes'] }; scopeSpans: { spans: OtlpSpan[] }[] }[] };
    for (const rs of body.resourceSpans) {
      expect(attr(rs.resource.attributes, 'service.name')).toBe('hangar');
      for (const ss of rs.scopeSpans) spans.push(...ss.spans);
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    for (const w of waiters.filter((w) => spans.length >= w.n)) w.resolve();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const handle = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    spans,
    requests,
    server,
    waitFor: (n: number) => (spans.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }))),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  open.push(handle);
  return handle;
}

function attr(list: OtlpSpan['attributes'], key: string): unknown {
  const v = list.find((a) => a.key === key)?.value;
  if (!v) return undefined;
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('arrayValue' in v) return ((v.arrayValue as { values?: { stringValue: string }[] }).values ?? []).map((x) => x.stringValue);
  return Object.values(v)[0];
}

function hexId(id: string): string {
  return /^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
}

async function started(env: Record<string, string> = {}): Promise<TestServer> {
  const s = await startTestServer({ env });
  open.push({ close: () => s.close() });
  return s;
}

/** A model call inside an agent run, as the SDK reports it. */
function agentTrace() {
  const root = randomUUID();
  const llm = randomUUID();
  const toolRun = randomUUID();
  const t0 = new Date();
  const t1 = new Date(t0.getTime() + 50);
  const seg = (d: Date, id: string) => `${d.toISOString().replace(/[-:.]/g, '').replace('Z', '000Z')}${id}`;
  return {
    root,
    llm,
    toolRun,
    post: [
      { id: root, trace_id: root, dotted_order: seg(t0, root), name: 'support-agent', run_type: 'chain', start_time: t0.toISOString(), inputs: { q: 'hi' }, extra: { metadata: { thread_id: 'th-9' } } },
      {
        id: llm, trace_id: root, parent_run_id: root, dotted_order: `${seg(t0, root)}.${seg(t0, llm)}`, name: 'ChatModel', run_type: 'llm',
        start_time: t0.toISOString(), end_time: t1.toISOString(), inputs: { messages: [{ type: 'human', content: 'hi' }] },
        outputs: { generations: [[{ text: 'hello', message: { type: 'ai', content: 'hello', usage_metadata: { input_tokens: 7, output_tokens: 3, total_tokens: 10 } } }]] },
        extra: { metadata: { ls_provider: 'stand-in-provider', ls_model_name: 'stand-in-model-1' } },
      },
      {
        id: toolRun, trace_id: root, parent_run_id: root, dotted_order: `${seg(t0, root)}.${seg(t1, toolRun)}`, name: 'search', run_type: 'tool',
        start_time: t1.toISOString(), end_time: t1.toISOString(), inputs: { query: 'docs' }, error: 'search backend unavailable',
      },
    ],
    patch: [{ id: root, trace_id: root, dotted_order: seg(t0, root), end_time: t1.toISOString(), outputs: { answer: 'hello' } }],
  };
}

async function send(server: TestServer, body: unknown, apiKey = server.adminKey): Promise<number> {
  const res = await fetch(`${server.url}/langsmith/runs/batch`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey }, body: JSON.stringify(body) });
  await res.body?.cancel();
  return res.status;
}

describe('trace export', () => {
  it('sends completed runs as OTLP spans with GenAI attributes, and forwards them to a LangSmith-compatible API', async () => {
    const receiver = await otlpReceiver();
    const destination = await started();
    const server = await started({
      HANGAR_OTLP_TRACES_ENDPOINT: receiver.url,
      HANGAR_OTLP_HEADERS: 'x-collector-key=k1',
      HANGAR_LANGSMITH_EXPORT_URL: `${destination.url}/langsmith`,
      HANGAR_LANGSMITH_EXPORT_API_KEY: destination.adminKey,
    });
    const t = agentTrace();
    expect(await send(server, { post: t.post })).toBe(202);
    expect(await send(server, { patch: t.patch })).toBe(202);
    await server.hangar.services.tracing.flushExports();
    await receiver.waitFor(3);

    const byName = new Map(receiver.spans.map((s) => [s.name, s]));
    const root = byName.get('invoke_agent support-agent')!;
    const chat = byName.get('chat stand-in-model-1')!;
    const tool = byName.get('execute_tool search')!;
    expect(root && chat && tool).toBeTruthy();
    const traceHex = t.root.replace(/-/g, '');
    for (const s of [root, chat, tool]) expect(hexId(s.traceId)).toBe(traceHex);
    expect(root.parentSpanId ? hexId(root.parentSpanId) : '').toBe('');
    expect(hexId(chat.parentSpanId!)).toBe(hexId(root.spanId));
    expect(attr(chat.attributes, 'gen_ai.operation.name')).toBe('chat');
    expect(attr(chat.attributes, 'gen_ai.provider.name')).toBe('stand-in-provider');
    expect(attr(chat.attributes, 'gen_ai.request.model')).toBe('stand-in-model-1');
    expect(attr(chat.attributes, 'gen_ai.usage.input_tokens')).toBe(7);
    expect(attr(chat.attributes, 'gen_ai.usage.output_tokens')).toBe(3);
    expect(attr(tool.attributes, 'gen_ai.operation.name')).toBe('execute_tool');
    expect(attr(tool.attributes, 'gen_ai.tool.name')).toBe('search');
    expect(tool.status?.code).toBe(2); // ERROR
    expect(attr(root.attributes, 'gen_ai.conversation.id')).toBe('th-9');

    // The forwarded copy is readable in the destination, tokens and all.
    const forwarded = await destination.client.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: t.root } } });
    expect(forwarded.response.status).toBe(200);
    expect(forwarded.data).toMatchObject({ name: 'support-agent', status: 'success', total_tokens: 10 });
    expect(forwarded.data!.child_runs.map((c) => c.name)).toEqual(['ChatModel', 'search']);

    const counters = await server.client.GET('/v1/tracing/exporters');
    expect(counters.data!.items).toEqual([
      { name: 'otlp', queued: 0, sent: 3, dropped: 0 },
      { name: 'langsmith', queued: 0, sent: 4, dropped: 0 },
    ]);
  });

  it('keeps ingesting while the collector hangs, holds at most the queue bound, and counts what it drops', async () => {
    const hung = await otlpReceiver({ hang: true });
    const server = await started({ HANGAR_OTLP_TRACES_ENDPOINT: hung.url, HANGAR_TRACE_EXPORT_QUEUE: '4' });
    const firstRequest = once(hung.server, 'export-request');
    expect(await send(server, { post: agentTrace().post.slice(1) })).toBe(202); // two completed spans
    await firstRequest; // the exporter sent its batch and is now stuck on a request that never ends
    for (let i = 0; i < 5; i++) expect(await send(server, { post: agentTrace().post.slice(1) })).toBe(202);
    const [otlp] = (await server.client.GET('/v1/tracing/exporters')).data!.items;
    expect(otlp!.queued).toBe(4); // the bound
    expect(otlp!.dropped).toBe(10 - 4);
    expect(otlp!.sent).toBe(0);
  });

  it('still exports runs that end after many runs that never ended: the oldest unfinished run gives way', async () => {
    const receiver = await otlpReceiver();
    const server = await started({ HANGAR_OTLP_TRACES_ENDPOINT: receiver.url, HANGAR_OTLP_HEADERS: 'x-collector-key=k1', HANGAR_TRACE_EXPORT_QUEUE: '2' });
    // Three runs start and never end (their client crashed): more than the exporter holds.
    for (let i = 0; i < 3; i++) expect(await send(server, { post: [agentTrace().post[0]] })).toBe(202);
    // A later run starts, then ends in a second report: it becomes a span.
    const t = agentTrace();
    expect(await send(server, { post: [t.post[0]] })).toBe(202);
    expect(await send(server, { patch: t.patch })).toBe(202);
    await server.hangar.services.tracing.flushExports(); // resolves once the receiver has answered
    expect(receiver.spans.map((s) => s.name)).toEqual(['invoke_agent support-agent']);
    expect(hexId(receiver.spans[0]!.traceId)).toBe(t.root.replace(/-/g, ''));
    const [otlp] = (await server.client.GET('/v1/tracing/exporters')).data!.items;
    expect(otlp).toEqual({ name: 'otlp', queued: 0, sent: 1, dropped: 2 });
  });

  it('counts each workspace’s run reports for its own keys only: another workspace sees none of them', async () => {
    const hung = await otlpReceiver({ hang: true });
    const server = await started({ HANGAR_OTLP_TRACES_ENDPOINT: hung.url, HANGAR_TRACE_EXPORT_QUEUE: '4' });
    const other = await server.createWorkspace('exporters-other');
    const firstRequest = once(hung.server, 'export-request');
    expect(await send(server, { post: agentTrace().post.slice(1) })).toBe(202); // two completed spans
    await firstRequest; // sent, and stuck on a request that never ends
    // The other workspace fills the queue (bound 4) and has two dropped; then two more of ours are dropped.
    for (let i = 0; i < 3; i++) expect(await send(server, { post: agentTrace().post.slice(1) }, other.adminKey)).toBe(202);
    expect(await send(server, { post: agentTrace().post.slice(1) })).toBe(202);
    const [mine] = (await server.client.GET('/v1/tracing/exporters')).data!.items;
    const [theirs] = (await other.client.GET('/v1/tracing/exporters')).data!.items;
    expect(mine).toEqual({ name: 'otlp', queued: 0, sent: 0, dropped: 2 });
    expect(theirs).toEqual({ name: 'otlp', queued: 4, sent: 0, dropped: 2 });
    // The process's totals stay on /metrics, for its operator.
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/exporter="otlp"\} 4\b/);
  });

  it('drops and counts spans for a collector on a closed port, while ingestion succeeds', async () => {
    const closed = http.createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const server = await started({ HANGAR_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${port}/v1/traces` });
    for (let i = 0; i < 3; i++) expect(await send(server, { post: agentTrace().post.slice(1) })).toBe(202);
    await server.hangar.services.tracing.flushExports();
    const [otlp] = (await server.client.GET('/v1/tracing/exporters')).data!.items;
    expect(otlp).toEqual({ name: 'otlp', queued: 0, sent: 0, dropped: 6 });
    const project = (await server.client.GET('/v1/tracing/projects')).data!.items[0]!;
    const stats = await server.client.GET('/v1/tracing/projects/{project_id}/stats', { params: { path: { project_id: project.id } } });
    expect(stats.data!.prompt_tokens).toBe(21);

    // An agent run on the same server completes normally and is traced in Hangar's own store.
    const agentId = await createAgent(server);
    const threadId = await createThread(server, agentId);
    const { stream, events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'still fine' }] });
    expect(lastAiText(lastValues(events))).toBe('You said: still fine');
    const trace = await server.client.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: stream.runId! } } });
    expect(trace.data!.status).toBe('success');
    await server.hangar.services.tracing.flushExports();
    const [after] = (await server.client.GET('/v1/tracing/exporters')).data!.items;
    expect(after!.sent).toBe(0);
    expect(after!.dropped).toBeGreaterThan(6);
  });
});

describe('HANGAR_OTLP_HEADERS', () => {
  it('with bad percent-encoding stops start-up as a setting error naming the header, not its value', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-otlp-headers-'));
    try {
      const bad = await runHangar(['serve', '--data-dir', dataDir, '--host', '127.0.0.1', '--port', '0'], {
        HANGAR_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9/v1/traces',
        HANGAR_OTLP_HEADERS: 'x-collector-key=s3cr%zzet',
      });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('HANGAR_OTLP_HEADERS: the value of header "x-collector-key" is not valid percent-encoding');
      expect(bad.stderr).not.toContain('s3cr');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
