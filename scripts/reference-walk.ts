// Walks the hosted product's published OpenAPI document operation by operation against a live Hangar
// (embedded PostgreSQL, a real MCP tool server, port 0): each operation with the document's examples,
// its required fields only and each optional field alone; then every invalid form derivable from its
// schemas. Each answer's status must be one the document declares and its body must validate against
// the document's schema for that status; the differences Hangar keeps on purpose are listed by reason
// (docs/clients.md). Ends with a comparison of the two OpenAPI documents.
//   npx tsx scripts/reference-walk.ts [path/to/managed-deep-agents-openapi.json]
// Without a path it looks in ../shared/reference/ beside the checkout, and says so when nothing is there.
/* eslint-disable @typescript-eslint/no-explicit-any -- the reference and the answers are untyped JSON walked by hand */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/index.js';
import { startHangar } from '../src/server.js';
import { startBearerToolServer } from '../test/support/mcp.js';
import { compareDocs } from './reference-walk-compare.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const candidates = [process.argv[2], path.join(ROOT, '../shared/reference/managed-deep-agents-openapi.json')];
const refPath = candidates.find((p) => p && existsSync(p));
if (!refPath) {
  process.stdout.write('reference document not found: pass its path\n');
  process.exit(0);
}
type Json = any;
const ref: Json = JSON.parse(readFileSync(refPath, 'utf8'));
// ajv (JSON Schema 2020-12, as OpenAPI 3.1 uses) comes with the dev tooling, not with Hangar.
const { default: Ajv2020 } = (await import('ajv/dist/2020.js')) as any;
const { default: addFormats } = (await import('ajv-formats')) as any;
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
ajv.addSchema(ref, 'ref');

const ptr = (parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
const deref = (node: Json): Json => {
  if (node && typeof node === 'object' && typeof node.$ref === 'string' && node.$ref.startsWith('#/')) {
    return deref(node.$ref.slice(2).split('/').map((s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~')).reduce((o: Json, k: string) => o[k], ref));
  }
  return node;
};
/** Resolve $ref and merge allOf into one object schema. */
const flat = (schema: Json): Json => {
  const s = deref(schema);
  if (!s || !s.allOf) return s;
  const out: Json = { type: 'object', properties: {}, required: [] };
  for (const part of s.allOf.map(flat)) {
    Object.assign(out.properties, part.properties ?? {});
    out.required.push(...(part.required ?? []));
  }
  return out;
};

// ---------- live server and fixtures
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'reference-walk-'));
const KEY = `walk_${Math.random().toString(36).slice(2)}_${Date.now()}`;
const hangar = await startHangar(loadConfig({ flags: { port: 0, dataDir }, env: { HANGAR_BOOTSTRAP_API_KEY: KEY, LOG_LEVEL: 'silent', HANGAR_AUTH_FAILURE_LIMIT: '100000' } }), {
  logDestination: new Writable({ write: (_c, _e, d) => d() }),
  announce: () => {},
});
const TOKEN = 'walk-token';
const tools = await startBearerToolServer(TOKEN);
const BASE = `${hangar.url}/v1/deepagents`;

interface Answer { status: number; type: string | null; text: string; json: Json }
async function call(method: string, p: string, opts: { query?: Record<string, string>; body?: Json; key?: string | null; headers?: Record<string, string> } = {}): Promise<Answer> {
  const url = new URL(BASE + p);
  for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key !== null) headers['x-api-key'] = opts.key ?? KEY;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  if (p.endsWith('/runs/stream')) headers.accept = 'text/event-stream';
  const res = await fetch(url, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  let json: Json;
  try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
  return { status: res.status, type: res.headers.get('content-type'), text, json };
}

// ---------- request samples from the reference's schemas
let seq = 0;
function sample(schema: Json, ctx: Record<string, string>, depth = 0, name = ''): Json {
  const s = flat(schema);
  if (!s) return 'x';
  if (s.example !== undefined) return s.example;
  if (s.enum) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
  switch (type) {
    case 'object': {
      const out: Json = {};
      for (const req of s.required ?? []) out[req] = sample(s.properties?.[req], ctx, depth + 1, req);
      return out;
    }
    case 'array': {
      const items = flat(s.items);
      if (items?.properties) return [Object.fromEntries(Object.entries<Json>(items.properties).map(([k, v]) => [k, sample(v, ctx, depth + 2, k)]))];
      return [sample(s.items, ctx, depth + 1, name)];
    }
    case 'integer': case 'number': return s.default ?? s.minimum ?? 1;
    case 'boolean': return s.default ?? false;
    default:
      if (s.format === 'uuid') return ctx[name] ?? '00000000-0000-4000-8000-000000000000';
      if (s.format === 'uri') return ctx.url ?? 'https://example.com/mcp';
      return ctx[name] ?? `${name || 'value'}-${++seq}`;
  }
}

// ---------- results
interface Row { op: string; variant: string; status: number; verdict: string; note: string }
const rows: Row[] = [];
const ops: Record<string, any> = {};
for (const [p, item] of Object.entries<Json>(ref.paths)) {
  for (const [m, op] of Object.entries<Json>(item)) if (op.operationId) ops[op.operationId] = { method: m.toUpperCase(), path: p, op };
}

function schemaFor(opId: string, status: number): { declared: boolean; pointer?: string } {
  const { method, path: p, op } = ops[opId];
  const resp = op.responses?.[String(status)];
  if (!resp) return { declared: false };
  const base = resp.$ref ? resp.$ref.slice(2).split('/') : ['paths', p, method.toLowerCase(), 'responses', String(status)];
  const r = deref(resp);
  if (!r.content) return { declared: true };
  const media = Object.keys(r.content)[0]!;
  if (!r.content[media].schema) return { declared: true };
  return { declared: true, pointer: `ref#/${ptr([...base, 'content', media, 'schema'])}` };
}

/** Check one answer against the reference: declared status, body schema; `expect` is 'ok' (valid request) or '4xx'. */
function judge(opId: string, variant: string, a: Answer, expect: 'ok' | '4xx' | number, extra = ''): Answer {
  const notes: string[] = [];
  let verdict = 'pass';
  const decl = schemaFor(opId, a.status);
  if (typeof expect === 'number') { if (a.status !== expect) { verdict = 'FAIL'; notes.push(`expected ${expect}: ${a.text.slice(0, 200)}`); } }
  else if (a.status >= 500) { verdict = 'FAIL'; notes.push('5xx'); }
  if (expect === 'ok' && a.status >= 300) { verdict = 'FAIL'; notes.push(`valid request refused: ${a.text.slice(0, 300)}`); }
  if (expect === '4xx' && (a.status < 400 || a.status >= 500)) { verdict = 'FAIL'; notes.push(`invalid request answered ${a.status}`); }
  if (!decl.declared) { if (verdict === 'pass') verdict = 'UNDECLARED'; notes.push(`status ${a.status} not declared by the reference`); }
  if (decl.pointer) {
    const isStream = ops[opId].op.responses?.[String(a.status)]?.content?.['text/event-stream'];
    if (isStream) {
      if (!a.type?.startsWith('text/event-stream')) { verdict = 'FAIL'; notes.push(`content-type ${a.type}`); }
    } else {
      const validate = ajv.getSchema(decl.pointer) ?? ajv.compile({ $ref: decl.pointer });
      if (!validate(a.json)) { if (verdict === 'pass') verdict = 'SCHEMA'; notes.push(`body vs schema: ${ajv.errorsText(validate.errors)}`); }
    }
  } else if (decl.declared && a.status === 204 && a.text !== '') { verdict = 'SCHEMA'; notes.push('204 with a body'); }
  rows.push({ op: opId, variant, status: a.status, verdict, note: [extra, ...notes].filter(Boolean).join('; ') });
  return a;
}

/** The invalid forms derivable from a body schema: each required field missing, each enum given a value outside it, each typed field given the wrong type. */
function invalidForms(schema: Json, body: Json, at: string[] = []): { name: string; body: Json }[] {
  const s = flat(schema);
  const out: { name: string; body: Json }[] = [];
  if (!s || !body || typeof body !== 'object' || Array.isArray(body)) return out;
  const mutate = (name: string, f: (target: Json) => void) => {
    const copy = structuredClone(body);
    f(copy);
    out.push({ name, body: copy });
  };
  for (const req of s.required ?? []) mutate(`missing ${[...at, req].join('.')}`, (c) => delete c[req]);
  for (const [k, v] of Object.entries<Json>(s.properties ?? {})) {
    if (!(k in body)) continue;
    const ps = flat(v);
    if (ps?.enum || ps?.items && flat(ps.items)?.enum) {
      mutate(`bad enum ${[...at, k].join('.')}`, (c) => { c[k] = ps.enum ? 'not-a-listed-value' : ['not-a-listed-value']; });
    }
    const type = Array.isArray(ps?.type) ? null : ps?.type;
    const wrong = type === 'string' ? 12345 : type === 'boolean' ? 'yes' : type === 'integer' ? 'many' : type === 'array' ? 'not-an-array' : type === 'object' ? 'not-an-object' : undefined;
    if (wrong !== undefined && !(ps?.additionalProperties === true && type === 'object' && k === 'metadata')) mutate(`wrong type ${[...at, k].join('.')}`, (c) => { c[k] = wrong; });
    if (type === 'object' && body[k] && typeof body[k] === 'object') {
      for (const inner of invalidForms(v, body[k], [...at, k])) mutate(inner.name, (c) => { c[k] = inner.body; });
    }
  }
  return out;
}

/** Valid variants of a body: the reference's examples (adapted), the minimum, and the minimum plus each optional field alone. */
function bodies(opId: string, ctx: Record<string, string>, adapt: (b: Json, variant?: string) => Json): { name: string; body: Json }[] {
  const rb = deref(ops[opId].op.requestBody);
  if (!rb) return [];
  const media = rb.content['application/json'];
  const out: { name: string; body: Json }[] = [];
  for (const [name, ex] of Object.entries<Json>(media.examples ?? {})) out.push({ name: `example ${name}`, body: adapt(structuredClone(ex.value), `example ${name}`) });
  const s = flat(media.schema);
  const min = sample(s, ctx);
  out.push({ name: 'required only', body: adapt(structuredClone(min), 'required only') });
  for (const [k, v] of Object.entries<Json>(s.properties ?? {})) {
    if (k in min) continue;
    const vs = flat(v);
    let value = sample(vs, ctx, 1, k);
    const full = (sch: Json, d: number): Json => {
      const f = flat(sch);
      if (f?.type === 'object' && f.properties && d < 3) return Object.fromEntries(Object.entries<Json>(f.properties).map(([pk, pv]) => [pk, flat(pv)?.type === 'object' && flat(pv).properties ? full(pv, d + 1) : sample(pv, ctx, d + 1, pk)]));
      return sample(sch, ctx, d, k);
    };
    if (vs?.type === 'object' && vs.properties) value = full(vs, 1);
    out.push({ name: `plus ${k}`, body: adapt({ ...structuredClone(min), [k]: value }, `plus ${k}`) });
  }
  return out;
}

const paramsOf = (opId: string): Json[] => [...(ops[opId].op.parameters ?? []).map(deref)];
const fill = (p: string, values: Record<string, string>) => p.replace(/\{(\w+)\}/g, (_m, n) => values[n] ?? `missing-${n}`);

/** Walk one operation: valid bodies, invalid bodies, query-parameter bounds and enums, a malformed uuid in the path, no key, a wrong key. */
async function walk(opId: string, o: { pathValues?: Record<string, string>; query?: Record<string, string>; adapt?: (b: Json, variant?: string) => Json; ctx?: Record<string, string>; skipValid?: boolean; after?: (a: Answer, variant: string) => Promise<void> | void } = {}) {
  const { method, path: p } = ops[opId];
  const url = fill(p, o.pathValues ?? {});
  const adapt = o.adapt ?? ((b: Json) => b);
  const ctx = o.ctx ?? {};
  const valid = bodies(opId, ctx, adapt);
  const hasBody = !!ops[opId].op.requestBody;
  if (!o.skipValid) {
    if (valid.length === 0) {
      const a = judge(opId, 'valid', await call(method, url, { query: o.query }), 'ok');
      await o.after?.(a, 'valid');
    }
    for (const v of valid) {
      const a = judge(opId, v.name, await call(method, url, { query: o.query, body: v.body }), 'ok');
      await o.after?.(a, v.name);
    }
  }
  if (hasBody) {
    const rb = deref(ops[opId].op.requestBody);
    const schema = rb.content['application/json'].schema;
    const base = valid.find((v) => v.name === 'required only')?.body ?? valid[0]?.body;
    const forms = invalidForms(schema, base);
    // the invalid forms inside each optional field, from the variant that sends it
    for (const v of valid) {
      const added = /^plus (\w+)$/.exec(v.name)?.[1];
      if (added) forms.push(...invalidForms(schema, v.body).filter((f) => new RegExp(`[ .]${added}(\\.|$)`).test(f.name) && !forms.some((g) => g.name === f.name)));
    }
    for (const bad of forms) judge(opId, `invalid: ${bad.name}`, await call(method, url, { query: o.query, body: bad.body }), '4xx');
    if (rb.required) judge(opId, 'invalid: no body', await call(method, url, { query: o.query }), '4xx');
    judge(opId, 'invalid: malformed JSON', await (async () => {
      const res = await fetch(new URL(BASE + url), { method, headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: '{"oops":' });
      const text = await res.text();
      let json: Json; try { json = JSON.parse(text); } catch { /* not JSON */ }
      return { status: res.status, type: res.headers.get('content-type'), text, json };
    })(), '4xx');
  }
  for (const prm of paramsOf(opId)) {
    const s = deref(prm.schema);
    if (prm.in === 'query') {
      if (s.enum) judge(opId, `invalid: query ${prm.name} outside enum`, await call(method, url, { query: { ...o.query, [prm.name]: 'not-a-listed-value' }, body: hasBody ? valid[0]?.body : undefined }), '4xx');
      if (s.minimum !== undefined) judge(opId, `invalid: query ${prm.name} below minimum`, await call(method, url, { query: { ...o.query, [prm.name]: String(s.minimum - 1) }, body: hasBody ? valid[0]?.body : undefined }), '4xx');
      if (s.maximum !== undefined) judge(opId, `invalid: query ${prm.name} above maximum`, await call(method, url, { query: { ...o.query, [prm.name]: String(s.maximum + 1) }, body: hasBody ? valid[0]?.body : undefined }), '4xx');
      if (s.type === 'integer' || s.type === 'boolean') judge(opId, `invalid: query ${prm.name} wrong type`, await call(method, url, { query: { ...o.query, [prm.name]: 'zzz' }, body: hasBody ? valid[0]?.body : undefined }), '4xx');
    }
    if (prm.in === 'path' && s.format === 'uuid' && !(method === 'DELETE')) {
      judge(opId, `invalid: path ${prm.name} not a uuid`, await call(method, fill(p, { ...o.pathValues, [prm.name]: 'not-a-uuid' }), { body: hasBody ? valid[0]?.body : undefined }), '4xx');
    }
    // an id that names nothing: 404 (a delete is idempotent: 204)
    if (prm.in === 'path') {
      const a = await call(method, fill(p, { ...o.pathValues, [prm.name]: '0badc0de-0000-4000-8000-000000000000' }), { body: hasBody ? valid[0]?.body : undefined });
      judge(opId, `unknown ${prm.name}`, a, method === 'DELETE' ? 'ok' : 404);
    }
  }
  judge(opId, 'no key', await call(method, url, { key: null, body: hasBody ? valid[0]?.body : undefined }), '4xx');
  judge(opId, 'wrong key', await call(method, url, { key: 'not-a-real-key-0000', body: hasBody ? valid[0]?.body : undefined }), '4xx');
}

// ---------- the walk, in an order where each operation has what it needs
const ids: Record<string, any> = {};
let serverN = 0;
const toolUrl = (n: number) => `${tools.url}-${n}`;
const useTools = (b: Json) => {
  if (b.tools?.tools) {
    for (const t of b.tools.tools) t.mcp_server_url = tools.url;
    b.tools.interrupt_config = Object.fromEntries(Object.entries(b.tools.interrupt_config ?? {}).map(([k, v]) => [k.replace(/^https?:\/\/[^:]+(:\d+)?[^:]*::/, `${tools.url}::`).replace(/::(tavily_web_search|read_url_content)/, '::add'), v]));
    for (const t of b.tools.tools) if (t.name === 'tavily_web_search' || t.name === 'read_url_content') t.name = t.name === 'tavily_web_search' ? 'add' : 'whoami';
  }
  if (b.runtime?.model) b.runtime.model.model_id = 'scripted:demo';
  for (const sub of b.subagents ?? []) { if (sub.model_id) sub.model_id = 'scripted:demo'; sub.name = 'helper'; if (sub.tools) useTools(sub); }
  for (const skill of b.skills ?? []) skill.name = 'a-skill';
  if (b.files) b.files = { 'notes/readme.md': { content: 'notes' } };
  return b;
};

// An OAuth provider (the session start only builds a URL, so a made-up authorization server is enough)
const provider: any = await (await fetch(`${hangar.url}/v2/auth/providers`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify({ provider_id: 'github-tools-provider', name: 'Tools', client_id: 'cid', client_secret: 'cs', auth_url: 'https://auth.example.com/authorize', token_url: 'https://auth.example.com/token' }) })).json();
ids.provider = provider.id;
// Tool servers
await walk('createMcpServer', {
  adapt: (b) => {
    b.url = toolUrl(++serverN);
    b.name = `${b.name ?? 'srv'}-${serverN}`;
    if (b.headers) b.headers = b.headers.map((h: Json) => ({ key: h.key === 'key-1' ? 'Authorization' : h.key, value: `Bearer ${TOKEN}` }));
    return b;
  },
  ctx: { url: tools.url, oauth_provider_id: ids.provider },
  after: (a) => { if (a.status === 201 && !ids.mcp) ids.mcp = a.json.id; },
});
// the fixture server at its own URL, for the agents' tools
const reg = await call('POST', '/mcp-servers', { body: { name: 'calc', url: tools.url, headers: [{ key: 'Authorization', value: `Bearer ${TOKEN}` }] } });
ids.calc = reg.json.id;
await walk('listMcpServers');
await walk('getMcpServer', { pathValues: { mcp_server_id: ids.calc } });
await walk('updateMcpServer', {
  pathValues: { mcp_server_id: ids.calc },
  adapt: (b) => {
    if (b.headers) b.headers = [{ key: 'Authorization', value: `Bearer ${TOKEN}` }];
    if ('url' in b) b.url = tools.url;
    return b;
  },
  ctx: { url: tools.url, oauth_provider_id: ids.provider },
});
const oauthServer = await call('POST', '/mcp-servers', { body: { name: 'oauth-tools', url: toolUrl(900), auth_type: 'oauth', oauth_provider_id: ids.provider } });
ids.oauthServer = oauthServer.json?.id;
await walk('registerMcpOAuthProvider', { pathValues: { mcp_server_id: ids.oauthServer } });
judge('registerMcpOAuthProvider', 'server without OAuth', await call('POST', `/mcp-servers/${ids.calc}/oauth-provider`, { body: {} }), '4xx');

// Agents
await walk('createManagedDeepAgent', {
  // the reference requires only `name`; past the required-only variant, give each a model so that the field under test decides
  adapt: (b, variant) => useTools({ ...(variant === 'required only' || b.runtime ? {} : { runtime: { model: { model_id: 'scripted:demo' } } }), ...b, name: `${b.name}-${++seq}` }),
  ctx: { url: tools.url },
  after: (a, v) => { if (a.status === 201 && v.startsWith('example')) ids.agent = a.json.id; },
});
if (!ids.agent) ids.agent = (await call('POST', '/agents', { body: { name: 'walk-agent', runtime: { model: { model_id: 'scripted:demo' } }, instructions: 'Be brief.' } })).json.id;
// the reference lets a zone it does not know fall back to UTC; Hangar names it (docs/clients.md)
judge('createManagedDeepAgent', 'X-User-Timezone not a zone', await call('POST', '/agents', { body: { name: 'tz', runtime: { model: { model_id: 'scripted:demo' } } }, headers: { 'x-user-timezone': 'Mars/Olympus_Mons' } }), 'ok');
await walk('listManagedDeepAgents');
judge('listManagedDeepAgents', 'invalid: a cursor no answer gave', await call('GET', '/agents', { query: { cursor: 'not-a-cursor' } }), '4xx');
await walk('getManagedDeepAgent', { pathValues: { agent_id: ids.agent }, query: { include_files: 'true' } });
await walk('updateManagedDeepAgent', { pathValues: { agent_id: ids.agent }, adapt: useTools, ctx: { url: tools.url } });
// A tool-calling agent with approval on `add`, for an interrupt
const hitl = await call('POST', '/agents', { body: { name: 'walk-hitl', runtime: { model: { model_id: 'scripted:demo' } }, instructions: 'Be brief.', tools: { tools: [{ name: 'add', mcp_server_url: tools.url }], interrupt_config: { [`${tools.url}::add`]: true } } } });
ids.hitl = hitl.json.id;

// Threads
await walk('createManagedDeepAgentThread', {
  adapt: (b) => ({ ...b, agent_id: ids.agent }),
  ctx: { agent_id: ids.agent },
  after: (a) => { if (a.status === 201 && !ids.thread) ids.thread = a.json.id; },
});
await walk('searchManagedDeepAgentThreads');
await walk('countManagedDeepAgentThreads');
await walk('getManagedDeepAgentThread', { pathValues: { threadID: ids.thread } });

// Runs
const newThread = async (agent: string) => (await call('POST', '/threads', { body: { agent_id: agent } })).json.id as string;
await walk('streamManagedDeepAgentThreadRun', {
  pathValues: { threadID: ids.thread },
  adapt: (b) => ({ ...b, agent_id: ids.agent }),
  ctx: { agent_id: ids.agent },
  after: (a, v) => {
    const first = /^event: (\S+)\ndata: (.*)$/m.exec(a.text);
    const data = first?.[2] ? JSON.parse(first[2]) : undefined;
    if (a.status === 200 && (first?.[1] !== 'metadata' || typeof data?.run_id !== 'string' || !Number.isInteger(data?.attempt))) rows.push({ op: 'streamManagedDeepAgentThreadRun', variant: `${v} (first event)`, status: a.status, verdict: 'FAIL', note: `first event not metadata {run_id, attempt}: ${a.text.slice(0, 200)}` });
  },
});
judge('streamManagedDeepAgentThreadRun', 'user_timezone not a zone', await call('POST', `/threads/${await newThread(ids.agent)}/runs/stream`, { body: { agent_id: ids.agent, messages: [{ role: 'user', content: 'hi' }], user_timezone: 'Mars/Olympus_Mons' } }), 'ok');
const runThread = await newThread(ids.agent);
await walk('createManagedDeepAgentThreadRun', {
  pathValues: { threadID: runThread },
  adapt: (b) => (Object.keys(b).length === 0 ? { agent_id: ids.agent, input: { messages: [{ role: 'user', content: 'hello' }] } } : b),
  after: async (a) => {
    // let the background run end before the next request on the same thread
    if (a.status < 300 && a.json?.run_id) await call('GET', `/threads/${runThread}/runs/${a.json.run_id}/join`);
  },
});
// the reference form of a background run: agent_id and messages at the top
judge('createManagedDeepAgentThreadRun', 'reference stream-form body', await call('POST', `/threads/${runThread}/runs`, { body: { agent_id: ids.agent, messages: [{ role: 'user', content: 'hi' }] } }), 'ok');
// resolve-interrupt: on a paused thread (204), then on an idle one (409)
const paused = await newThread(ids.hitl);
await call('POST', `/threads/${paused}/runs/stream`, { body: { agent_id: ids.hitl, messages: [{ role: 'user', content: '/call add {"a": 1, "b": 2}' }], stream_mode: ['values'] } });
await walk('resolveManagedDeepAgentThreadInterrupt', { pathValues: { threadID: paused } });
judge('resolveManagedDeepAgentThreadInterrupt', 'idle thread (conflict expected)', await call('POST', `/threads/${paused}/resolve-interrupt`), '4xx');

await walk('startAuthSession', {
  adapt: (b) => ({ ...b, provider_id: 'github-tools-provider', ...(b.agent_id ? { agent_id: ids.agent } : {}), ...(b.token_id ? { token_id: '00000000-0000-4000-8000-000000000000' } : {}), ...('is_default' in b ? { is_default: true } : {}) }),
  after: (a) => { if (a.status < 300 && a.json?.id && !ids.session) ids.session = a.json.id; },
});
await walk('getAuthSession', { pathValues: { session_id: ids.session }, query: { wait_seconds: '1' } });

// A viewer (no invoke permission): reads answer without credential headers, in the reference's shapes; writes are 403
const viewer = (await hangar.services.workspaces.createKey({ workspace: 'default', role: 'viewer' })).key;
const asViewer = (m: string, p: string, body?: Json) => call(m, p, { key: viewer, ...(body === undefined ? {} : { body }) });
const seen = judge('listMcpServers', 'viewer', await asViewer('GET', '/mcp-servers'), 'ok');
if (Array.isArray(seen.json) && seen.json.some((s: Json) => 'headers' in s)) rows.push({ op: 'listMcpServers', variant: 'viewer (headers)', status: seen.status, verdict: 'FAIL', note: 'credential headers shown to a caller without invoke permission' });
judge('getMcpServer', 'viewer', await asViewer('GET', `/mcp-servers/${ids.calc}`), 'ok');
judge('listManagedDeepAgents', 'viewer', await asViewer('GET', '/agents'), 'ok');
judge('getManagedDeepAgent', 'viewer', await asViewer('GET', `/agents/${ids.agent}`), 'ok');
judge('getManagedDeepAgentThread', 'viewer', await asViewer('GET', `/threads/${ids.thread}`), 'ok');
judge('searchManagedDeepAgentThreads', 'viewer', await asViewer('POST', '/threads/search', {}), 'ok');
judge('countManagedDeepAgentThreads', 'viewer', await asViewer('POST', '/threads/count', {}), 'ok');
judge('createMcpServer', 'viewer write', await asViewer('POST', '/mcp-servers', { name: 'v', url: toolUrl(700) }), 403);
judge('updateMcpServer', 'viewer write', await asViewer('PATCH', `/mcp-servers/${ids.calc}`, { headers: [] }), 403);
judge('createManagedDeepAgent', 'viewer write', await asViewer('POST', '/agents', { name: 'v', runtime: { model: { model_id: 'scripted:demo' } } }), 403);
judge('updateManagedDeepAgent', 'viewer write', await asViewer('PATCH', `/agents/${ids.agent}`, { description: 'v' }), 403);
judge('deleteManagedDeepAgent', 'viewer write', await asViewer('DELETE', `/agents/${ids.agent}`), 403);
judge('deleteMcpServer', 'viewer write', await asViewer('DELETE', `/mcp-servers/${ids.calc}`), 403);
judge('createManagedDeepAgentThread', 'viewer write', await asViewer('POST', '/threads', { agent_id: ids.agent }), 403);
judge('streamManagedDeepAgentThreadRun', 'viewer write', await asViewer('POST', `/threads/${ids.thread}/runs/stream`, { agent_id: ids.agent, messages: [{ role: 'user', content: 'x' }] }), 403);

// Deletes last; idempotent per the reference: a second delete (or an unknown id) is 204 too
await walk('deleteManagedDeepAgent', { pathValues: { agent_id: ids.agent } });
judge('deleteManagedDeepAgent', 'again (idempotent)', await call('DELETE', `/agents/${ids.agent}`), 'ok');
judge('streamManagedDeepAgentThreadRun', 'thread of a deleted agent (502 expected)', await call('POST', `/threads/${ids.thread}/runs/stream`, { body: { agent_id: ids.agent, messages: [{ role: 'user', content: 'x' }] } }), 502, 'SPEC: 502');
await walk('deleteMcpServer', { pathValues: { mcp_server_id: ids.mcp } });
judge('deleteMcpServer', 'again (idempotent)', await call('DELETE', `/mcp-servers/${ids.mcp}`), 'ok');

// ---------- report
// Differences decided on purpose (docs/clients.md, "Where Hangar differs from the hosted reference"); each names its reason.
const KNOWN: [RegExp, string][] = [
  [/FAIL \w+ \[(X-User-Timezone|user_timezone) not a zone\] 422/, 'a time zone that is not an IANA name is a 422, where the reference falls back to UTC'],
  [/UNDECLARED .* 422 /, 'validation failures are 422 with the field named, where the reference declares only 400 on some operations'],
  [/UNDECLARED (createManagedDeepAgent|updateManagedDeepAgent) \[(no|wrong) key\] 401/, 'a missing or unknown key is 401 on every operation; the reference leaves 401 out of these two'],
  [/registerMcpOAuthProvider \[server without OAuth\] 409/, 'a server without OAuth is a 409 mcp_server_not_oauth'],
  [/FAIL createManagedDeepAgent \[(required only|plus \w+)\] 422 .*runtime\.model\.model_id/, 'a self-hosted server has no default model: runtime.model.model_id is required'],
  [/FAIL (updateMcpServer|updateManagedDeepAgent) \[invalid: no body\] 200/, 'an update with no body changes nothing (as {} would)'],
  [/FAIL createManagedDeepAgentThread \[invalid: (missing agent_id|no body)\] 201/, 'a thread without an agent is the LangGraph form; its first run binds it (agent_id null until then)'],
  [/FAIL startAuthSession \[invalid: missing (scopes|strategy)\] 201/, 'scopes default to the provider\'s, strategy to REUSE'],
  [/FAIL startAuthSession \[plus token_id\] 404/, 'a made-up token_id is not a token of the caller (404 oauth_token_not_found)'],
  [/FAIL getAuthSession \[invalid: query wait_seconds below minimum\] 200/, 'wait_seconds 0 answers at once'],
];
const line = (r: Row) => `${r.verdict} ${r.op} [${r.variant}] ${r.status} ${r.note}`;
const notPass = rows.filter((r) => r.verdict !== 'pass');
const known = notPass.map((r) => ({ r, why: KNOWN.find(([re]) => re.test(line(r)))?.[1] }));
writeFileSync(path.join(os.tmpdir(), 'reference-walk-rows.json'), JSON.stringify(rows, null, 1));
const out = (t: string) => process.stdout.write(`${t}\n`);
out('Mismatches not explained:');
for (const { r } of known.filter((k) => !k.why)) out(`  ${line(r).slice(0, 400)}`);
out('Known differences:');
const byWhy = new Map<string, number>();
for (const { why } of known) if (why) byWhy.set(why, (byWhy.get(why) ?? 0) + 1);
for (const [why, n] of byWhy) out(`  ${n} x ${why}`);
const ourDoc = await (await fetch(`${hangar.url}/openapi.json`)).json();
const docDiffs: string[] = compareDocs(ref, ourDoc);
const KNOWN_DOC: [RegExp, string][] = [
  [/backend\.type: enum values ours sends/, 'answers give the current backend form (state, sandbox)'],
  [/request\.runtime(\.model)?: ours requires model/, 'runtime.model.model_id is required (no default model)'],
  [/request\.(tools\.tools|subagents|skills)\[\]: ours requires (name|mcp_server_url)/, 'entries need what writing them to files needs'],
  [/createManagedDeepAgentThread (request: the reference requires agent_id|201\.agent_id: ours may be null)/, 'threads without an agent (LangGraph form)'],
  [/createManagedDeepAgentThreadRun: success status 201/, 'a background run answers 200'],
  [/streamManagedDeepAgentThreadRun request(: the reference requires (agent_id|messages)|\.messages\[\]: ours requires content)/, 'assistant_id / input.messages / command forms; a message needs content'],
  [/startAuthSession request: the reference requires (scopes|strategy)/, 'scopes and strategy have defaults'],
];
const docUnexplained = docDiffs.filter((d) => !KNOWN_DOC.some(([re]) => re.test(d)));
out('\nOpenAPI, reference vs /openapi.json, not explained:');
for (const d of docUnexplained) out(`  ${d}`);
out('OpenAPI, known differences:');
for (const [re, why] of KNOWN_DOC) {
  const n = docDiffs.filter((d) => re.test(d)).length;
  if (n) out(`  ${n} x ${why}`);
}
out(`\noperations walked: ${new Set(rows.map((r) => r.op)).size} of ${Object.keys(ops).length}; requests: ${rows.length}; not passing: ${notPass.length} (known differences ${known.filter((k) => k.why).length}, unexplained ${known.filter((k) => !k.why).length}); OpenAPI differences: ${docDiffs.length} (unexplained ${docUnexplained.length})`);
await tools.close();
await hangar.close();
process.exit(0);
