// Property-based fuzzing of every operation in /openapi.json (issue 14): fast-check builds malformed
// and boundary requests from each operation's own schemas — wrong types, missing and unknown fields,
// huge and unicode strings, NUL and lone surrogates, deep nesting, bad ids, absurd paging, bad keys,
// wrong content types — and every answer must be below 500, in its surface's documented error shape,
// with the server healthy afterwards. Override the size with HANGAR_FUZZ_REQUESTS.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { surfaceOf } from '../../src/http/surface.js';
import { startEverythingServer } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  additionalProperties?: boolean | Schema;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  format?: string;
};
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: Schema;
}
interface Operation {
  method: string;
  path: string;
  parameters: Parameter[];
  body?: Schema;
}
interface FuzzRequest {
  key: 'admin' | 'viewer' | 'bad' | 'none';
  params: Record<string, string>;
  query: [string, string][];
  contentType: string | undefined;
  body: string | undefined;
}

const TOTAL = Number(process.env.HANGAR_FUZZ_REQUESTS ?? 5200);
const CONCURRENCY = 6;

let server: TestServer;
let toolServer: Awaited<ReturnType<typeof startEverythingServer>>;
let viewerKey: string;
let components: Record<string, Schema> = {};
let operations: Operation[] = [];
/** Ids of real resources, so that some requests get past the 404s into the handlers. */
const real: Record<string, string[]> = {};
const statuses = new Map<number, number>();
let sent = 0;

beforeAll(async () => {
  // No throttling here: bad keys are part of the mix and must keep getting their 401.
  server = await startTestServer({ env: { HANGAR_AUTH_FAILURE_LIMIT: '0', LOG_LEVEL: 'warn' } });
  viewerKey = await server.createKey({ role: 'viewer' });
  const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: { content?: Record<string, { schema?: Schema }> } }>>;
    components: { schemas: Record<string, Schema> };
  };
  components = doc.components.schemas;
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const body = op.requestBody?.content?.['application/json']?.schema;
      operations.push({ method: method.toUpperCase(), path, parameters: op.parameters ?? [], ...(body ? { body } : {}) });
    }
  }
  // A few real resources.
  const agent = await server.client.POST('/v1/deepagents/agents', { body: { name: 'fuzz-target', runtime: { model: { model_id: 'scripted:echo' } } } });
  const thread = await server.client.POST('/v1/deepagents/threads', { body: { agent_id: agent.data!.id } as never });
  // A real tool server: a request that reaches it gets its answer, so a 5xx is always Hangar's own
  // (an unreachable one would rightly answer 502 upstream to every well-formed listing).
  toolServer = await startEverythingServer();
  const tool = await server.client.POST('/v1/deepagents/mcp-servers', { body: { name: 'fuzz', url: toolServer.url } });
  real.agent_id = [agent.data!.id];
  real.thread_id = thread.data ? [thread.data.id] : [];
  real.mcp_server_id = [tool.data!.id];
  real.revision_id = [agent.data!.revision];
  operations = operations.filter((o) => o.path !== '/openapi.json');
});
afterAll(async () => {
  await server?.close();
  await toolServer?.close();
});

function resolve(schema: Schema | undefined): Schema {
  let s = schema ?? {};
  for (let i = 0; s.$ref && i < 10; i++) s = components[s.$ref.replace('#/components/schemas/', '')] ?? {};
  return s;
}

const nasty = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\u202eevil',
  '../../etc/passwd',
  '%00',
  '💥'.repeat(50),
  'null',
  '-1',
  '1e309',
  'x'.repeat(70_000),
  '<script>alert(1)</script>',
  "'; DROP TABLE agents; --",
);
const junk: fc.Arbitrary<unknown> = fc.oneof(
  nasty,
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
  fc.constantFrom(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1e300, -0),
);

/** A value for `schema`: usually of the right shape, sometimes not at all. */
function value(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema);
  if (depth > 4) return junk;
  const variants = s.anyOf ?? s.oneOf;
  if (variants) return fc.oneof(...variants.map((v) => value(v, depth + 1)), junk);
  if (s.allOf?.length) return value(s.allOf[0], depth + 1);
  if (s.enum) return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...s.enum) }, { weight: 1, arbitrary: junk });
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  const right = (() => {
    switch (type) {
      case 'string':
        if (s.format === 'uuid') return fc.oneof(fc.uuid(), fc.constantFrom(...Object.values(real).flat()));
        if (s.format === 'date-time') return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
        return fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'grapheme', maxLength: 30 }), nasty);
      case 'integer':
        return fc.oneof(fc.integer({ min: s.minimum ?? -10, max: Math.min(s.maximum ?? 200, 1e6) }), fc.constantFrom(-1, 0, 2 ** 31, 2 ** 53, -(2 ** 53)));
      case 'number':
        return fc.oneof(fc.double({ noNaN: true }), fc.constantFrom(1e308, -1e308));
      case 'boolean':
        return fc.boolean();
      case 'array':
        return fc.array(value(s.items, depth + 1), { maxLength: 4 });
      case 'object': {
        const props = Object.entries(s.properties ?? {});
        if (props.length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), junk, { maxKeys: 4 });
        return fc
          .record(Object.fromEntries(props.map(([k, v]) => [k, value(v, depth + 1)])), { requiredKeys: [] })
          .chain((obj) => fc.oneof(fc.constant(obj), fc.constant({ ...obj, unknown_field: 1 })));
      }
      default:
        return junk;
    }
  })();
  return fc.oneof({ weight: 5, arbitrary: right }, { weight: 1, arbitrary: junk });
}

/** JSON text nested `depth` levels (built as text: JSON.stringify itself would overflow). */
const deepText = fc.integer({ min: 60, max: 20_000 }).map((depth) => `{"metadata":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`);

function requestFor(op: Operation): fc.Arbitrary<FuzzRequest> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  const params = fc.record(
    Object.fromEntries(
      pathParams.map((p) => [
        p.name,
        fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom(...(real[p.name]?.length ? real[p.name]! : ['x'])) },
          { weight: 2, arbitrary: fc.uuid() },
          { weight: 2, arbitrary: nasty.filter((v) => v.length < 1000) },
          { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }) },
        ),
      ]),
    ),
  ) as fc.Arbitrary<Record<string, string>>;
  const query = fc.array(
    fc.tuple(
      fc.oneof({ weight: 4, arbitrary: queryParams.length ? fc.constantFrom(...queryParams.map((p) => p.name)) : fc.constant('q') }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) }),
      fc.oneof(
        fc.integer({ min: -5, max: 1000 }).map(String),
        fc.constantFrom('0', '-1', '1e9', '99999999999999999999', 'NaN', 'true', 'desc', 'name', '', '\u0000', '\ud800', 'x'.repeat(5000)),
        fc.string({ maxLength: 20 }),
      ),
    ),
    { maxLength: 4 },
  );
  const body: fc.Arbitrary<{ contentType: string | undefined; body: string | undefined }> = op.body || op.method !== 'GET'
    ? fc.oneof(
        { weight: 8, arbitrary: value(op.body).map((v) => ({ contentType: 'application/json', body: safeStringify(v) })) },
        { weight: 1, arbitrary: deepText.map((t) => ({ contentType: 'application/json', body: t })) },
        { weight: 1, arbitrary: fc.constantFrom('{', '[1,', 'nul', '"\\ud800"', '{"a":"\\u0000"}', '').map((t) => ({ contentType: 'application/json', body: t })) },
        { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x').map((ct) => ({ contentType: ct, body: 'a=b' })) },
        { weight: 1, arbitrary: fc.constant({ contentType: undefined, body: undefined }) },
      )
    : fc.constant({ contentType: undefined, body: undefined });
  return fc
    .record({
      key: fc.constantFrom<FuzzRequest['key']>('admin', 'admin', 'admin', 'admin', 'admin', 'admin', 'admin', 'viewer', 'bad', 'none'),
      params,
      query,
      body,
    })
    .map(({ key, params: p, query: q, body: b }) => ({ key, params: p, query: q, ...b }));
}

function safeStringify(v: unknown): string {
  try {
    return JSON.stringify(v) ?? 'null';
  } catch {
    return 'null';
  }
}

/** A path segment as a client would send it; a lone surrogate goes out as the invalid UTF-8 it becomes. */
function encodeSegment(v: string): string {
  try {
    return encodeURIComponent(v);
  } catch {
    return '%ED%A0%80';
  }
}

async function send(op: Operation, r: FuzzRequest): Promise<{ status: number; contentType: string; text: string; path: string }> {
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeSegment(r.params[name] ?? 'x'));
  const search = new URLSearchParams(r.query).toString();
  const headers: Record<string, string> = {};
  if (r.key === 'admin') headers['x-api-key'] = server.adminKey;
  if (r.key === 'viewer') headers['x-api-key'] = viewerKey;
  if (r.key === 'bad') headers['x-api-key'] = 'not-a-key';
  if (r.contentType) headers['content-type'] = r.contentType;
  const res = await fetch(`${server.url}${path}${search ? `?${search}` : ''}`, {
    method: op.method,
    headers,
    ...(r.body !== undefined && op.method !== 'GET' ? { body: r.body } : {}),
  });
  sent += 1;
  statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  const contentType = res.headers.get('content-type') ?? '';
  // Streams (runs) are not read to the end: their status and headers are the answer.
  const text = contentType.startsWith('text/event-stream') ? (await res.body?.cancel(), '') : await res.text();
  return { status: res.status, contentType, text, path };
}

/** Whether an error body has the shape its surface documents (DESIGN.md §1). */
function errorShapeProblem(path: string, status: number, contentType: string, text: string): string | undefined {
  // git prints a text/plain body to its user: a bad upload-pack request (400), a viewer refused a
  // history holding a credential (403), a path that names no agent by its id (404).
  if (/\.git\//.test(path) && contentType.startsWith('text/plain')) return [400, 403, 404].includes(status) ? undefined : `git text error with ${status}`;
  const surface = surfaceOf(new URL(path, 'http://x').pathname);
  // Pages people open in a browser (the OAuth callback) answer errors as HTML pages.
  if (surface === 'public' && contentType.startsWith('text/html')) return undefined;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return `error body is not JSON: ${text.slice(0, 100)}`;
  }
  if (surface === 'controlplane') {
    if (typeof body.detail === 'string') return undefined;
    if (Array.isArray(body.detail) && body.detail.every((i) => Array.isArray((i as { loc?: unknown }).loc) && typeof (i as { msg?: unknown }).msg === 'string')) return undefined;
    return `control-plane error without detail: ${text.slice(0, 200)}`;
  }
  if ((status === 401 || status === 403) && (body.error === 'Unauthorized' || body.error === 'Forbidden')) return undefined;
  if (typeof body.type === 'string' && typeof body.code === 'string' && typeof body.detail === 'string' && body.status === status) return undefined;
  return `error body not in the {type, code, detail, status} shape: ${text.slice(0, 200)}`;
}

describe('fuzzing every operation of /openapi.json', () => {
  it(`answers ${TOTAL}+ malformed and boundary requests below 500, in each surface's error shape`, async () => {
    expect(operations.length).toBeGreaterThan(40);
    const perOperation = Math.ceil(TOTAL / operations.length);
    const seed = Number(process.env.HANGAR_FUZZ_SEED ?? Date.now() % 2 ** 31);
    // A few operations at a time, each with its own sequential property (and shrinking on failure).
    const queue = [...operations];
    const worker = async () => {
      for (let op = queue.shift(); op; op = queue.shift()) await fuzzOperation(op, perOperation, seed);
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    expect(sent).toBeGreaterThanOrEqual(TOTAL);
    console.log([...timing].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([k, v]) => `${k} ${Math.round(v)}ms`).join('\n'));
    console.log(`fuzz: ${sent} requests over ${operations.length} operations (seed ${seed}); statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
  }, 240_000);

  it('leaves the server healthy, with no internal error logged', async () => {
    expect((await fetch(`${server.url}/ok`)).status).toBe(200);
    const list = await server.client.GET('/v1/deepagents/agents');
    expect(list.response.status).toBe(200);
    expect(server.logs()).not.toMatch(/unhandled error/);
  });
});

const timing = new Map<string, number>();

async function fuzzOperation(op: Operation, numRuns: number, seed: number): Promise<void> {
  const started = performance.now();
      await fc.assert(
        fc.asyncProperty(requestFor(op), async (r) => {
          const answer = await send(op, r);
          if (answer.status >= 500) throw new Error(`${op.method} ${answer.path} → ${answer.status}: ${answer.text.slice(0, 300)}`);
          if (answer.status >= 400) {
            const problem = errorShapeProblem(answer.path, answer.status, answer.contentType, answer.text);
            if (problem) throw new Error(`${op.method} ${answer.path} → ${answer.status}: ${problem}`);
          }
        }),
        { numRuns, seed, endOnFailure: true },
      );
  timing.set(`${op.method} ${op.path}`, performance.now() - started);
}
