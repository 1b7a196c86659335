// LangGraph's store endpoints on /v1/deepagents, driven by the official SDK's `client.store`: what a
// run writes under /memories/ is read and edited here and the next run reads the edit; namespaces
// are the workspace's own (another workspace reaches none of them); a principal's memories are
// that principal's and the admins'; viewers read only; bad input is a 422 naming the field.
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { principalLabel } from '../../src/core/store/service.js';
import { createAgent } from '../runtime/support.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let agentId: string;
let aliceKey: string;
const sdk = (apiKey: string) => new Client({ apiUrl: `${server.url}/v1/deepagents`, defaultHeaders: { 'X-Api-Key': apiKey }, callerOptions: { maxRetries: 0 } });

beforeAll(async () => {
  server = await startTestServer();
  agentId = await createAgent(server);
  aliceKey = await server.createKey({ role: 'member', principal: 'alice@example.com' });
});
afterAll(async () => {
  await server?.close();
});

/** Run `message` on a new thread of the agent as `apiKey` (memory writes need no approval) and return the answer. */
async function ask(apiKey: string, message: string): Promise<string> {
  const thread = await server.clientFor(apiKey).POST('/v1/deepagents/threads', { body: { agent_id: agentId, options: { skip_memory_write_protection: true } } });
  expect(thread.response.status).toBe(201);
  const values = (await sdk(apiKey).runs.wait(thread.data!.id, agentId, { input: { messages: [{ role: 'user', content: message }] } })) as { messages: { type: string; content: unknown }[] };
  const ai = values.messages.filter((m) => m.type === 'ai').at(-1)!;
  return typeof ai.content === 'string' ? ai.content : JSON.stringify(ai.content);
}

/** A memory file's text, whichever form (a string, or lines) deepagents stored it in. */
const text = (value: Record<string, unknown>) => (Array.isArray(value.content) ? value.content.join('\n') : String(value.content));

describe('the store through client.store', () => {
  it('shows what a run wrote under /memories/ and /memories/user/, and the next run reads an edit made here', async () => {
    await ask(aliceKey, '/call write_file {"file_path": "/memories/notes.md", "content": "likes tea"}\n/call write_file {"file_path": "/memories/user/prefs.md", "content": "alice prefers mornings"}');
    const alice = sdk(aliceKey);
    const { items } = await alice.store.searchItems([agentId, 'memories'], { limit: 50 });
    const agentNote = items.find((i) => i.key === '/notes.md')!;
    expect(agentNote.namespace).toEqual([agentId, 'memories']);
    expect(text(agentNote.value)).toBe('likes tea');
    expect(agentNote.createdAt).toMatch(/^\d{4}-/);
    const mine = items.find((i) => i.key === '/prefs.md')!;
    expect(mine.namespace).toEqual([agentId, 'memories', 'user', principalLabel('alice@example.com')]);
    expect(text(mine.value)).toBe('alice prefers mornings');

    const got = await alice.store.getItem([agentId, 'memories'], '/notes.md');
    expect(got?.value).toEqual(agentNote.value);
    expect(await alice.store.getItem([agentId, 'memories'], '/nothing.md')).toBeNull();
    const { namespaces } = await alice.store.listNamespaces({ prefix: [agentId] });
    expect(namespaces).toEqual(expect.arrayContaining([[agentId, 'memories'], [agentId, 'memories', 'user', principalLabel('alice@example.com')]]));

    // An edit through the API is what the next run reads.
    await alice.store.putItem([agentId, 'memories'], '/notes.md', { ...agentNote.value, content: 'likes green tea, no sugar', modified_at: new Date().toISOString() });
    expect(await ask(aliceKey, '/call read_file {"file_path": "/memories/notes.md"}')).toContain('likes green tea, no sugar');
    // A file made here is one the agent can read; a deleted one is gone for it.
    await alice.store.putItem([agentId, 'memories'], '/made-by-hand.md', { content: 'written in the API', created_at: new Date().toISOString(), modified_at: new Date().toISOString() });
    expect(await ask(aliceKey, '/call read_file {"file_path": "/memories/made-by-hand.md"}')).toContain('written in the API');
    await alice.store.deleteItem([agentId, 'memories'], '/made-by-hand.md');
    expect(await alice.store.getItem([agentId, 'memories'], '/made-by-hand.md')).toBeNull();
    expect(await ask(aliceKey, '/call read_file {"file_path": "/memories/made-by-hand.md"}')).toMatch(/not found|does not exist|no such/i);
  });

  it('keeps the memories of a principal whose label would hold an underscore in base64url (was a failed write)', async () => {
    // "Степан" is `0KHRgtC10L_QsNC9` in base64url; the store refuses "_" in a label.
    const principal = 'Степан';
    expect(Buffer.from(principal).toString('base64url')).toContain('_');
    const label = principalLabel(principal);
    expect(label).not.toMatch(/[%_\\.]/);
    const key = await server.createKey({ role: 'member', principal });
    expect(await ask(key, '/call write_file {"file_path": "/memories/user/prefs.md", "content": "Степан prefers tea"}')).not.toMatch(/error/i);
    const item = await sdk(key).store.getItem([agentId, 'memories', 'user', label], '/prefs.md');
    expect(text(item!.value)).toBe('Степан prefers tea');
  });

  it('keeps another workspace out: it neither reads nor writes this workspace’s items', async () => {
    const other = await server.createWorkspace('store-elsewhere');
    const intruder = sdk(other.adminKey);
    expect((await intruder.store.searchItems([agentId, 'memories'], { limit: 50 })).items).toEqual([]);
    expect((await intruder.store.searchItems([], { limit: 50 })).items).toEqual([]);
    expect(await intruder.store.getItem([agentId, 'memories'], '/notes.md')).toBeNull();
    expect((await intruder.store.listNamespaces()).namespaces).toEqual([]);
    // Naming the store's own layout does not help: every namespace is taken inside the caller's workspace.
    const [alicesWorkspace] = (await server.hangar.services.workspaces.listKeys({ workspace: 'default' })).map((k) => k.workspaceId);
    expect(await intruder.store.getItem(['hangar', alicesWorkspace!, agentId, 'memories'], '/notes.md')).toBeNull();
    await intruder.store.putItem([agentId, 'memories'], '/notes.md', { content: 'overwritten by another workspace', created_at: 'x', modified_at: 'x' });
    await intruder.store.deleteItem([agentId, 'memories', 'user', principalLabel('alice@example.com')], '/prefs.md');
    const alice = sdk(aliceKey);
    expect(text((await alice.store.getItem([agentId, 'memories'], '/notes.md'))!.value)).toBe('likes green tea, no sugar');
    expect(text((await alice.store.getItem([agentId, 'memories', 'user', principalLabel('alice@example.com')], '/prefs.md'))!.value)).toBe('alice prefers mornings');
    // The intruder's write stayed in its own workspace.
    expect((await intruder.store.searchItems([agentId], { limit: 10 })).items.map((i) => text(i.value))).toEqual(['overwritten by another workspace']);
  });

  it('keeps a principal’s memories to that principal and admins, and viewers read only', async () => {
    const aliceNs = [agentId, 'memories', 'user', principalLabel('alice@example.com')];
    const bob = sdk(await server.createKey({ role: 'member', principal: 'bob@example.com' }));
    await expect(bob.store.getItem(aliceNs, '/prefs.md')).rejects.toThrow(/403|another principal/);
    await expect(bob.store.putItem(aliceNs, '/prefs.md', { content: 'x' })).rejects.toThrow(/403|another principal/);
    const bobSees = (await bob.store.searchItems([agentId, 'memories'], { limit: 50 })).items;
    expect(bobSees.map((i) => i.key)).toContain('/notes.md');
    expect(bobSees.map((i) => i.key)).not.toContain('/prefs.md');
    expect((await bob.store.listNamespaces({ prefix: [agentId] })).namespaces).toEqual([[agentId, 'memories']]);

    const admin = sdk(server.adminKey);
    expect(text((await admin.store.getItem(aliceNs, '/prefs.md'))!.value)).toBe('alice prefers mornings');

    const viewer = sdk(await server.createKey({ role: 'viewer', principal: 'vera@example.com' }));
    expect((await viewer.store.getItem([agentId, 'memories'], '/notes.md'))?.key).toBe('/notes.md');
    await expect(viewer.store.putItem([agentId, 'memories'], '/notes.md', { content: 'no' })).rejects.toThrow(/403|viewer/);
    await expect(viewer.store.deleteItem([agentId, 'memories'], '/notes.md')).rejects.toThrow(/403|viewer/);
  });

  it('refuses bad input with a 422 that names the field', async () => {
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server.url}/v1/deepagents/store/${path}`, {
        method,
        headers: { 'X-Api-Key': aliceKey, 'content-type': 'application/json' },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (res.status === 204 ? {} : await res.json()) as { errors?: { loc: unknown[]; msg: string }[] } };
    };
    const dotted = await call('PUT', 'items', { namespace: ['a.b'], key: 'k', value: {} });
    expect(dotted.status).toBe(422);
    expect(dotted.body.errors![0]).toMatchObject({ loc: ['body', 'namespace', 0], msg: expect.stringContaining('period') });
    // The PostgreSQL store matches prefixes with LIKE: its wildcards and escape are not labels (was a 500).
    for (const label of ['user_1', '50%', 'a\\b']) {
      const reserved = await call('DELETE', 'items', { namespace: ['a', label], key: 'k' });
      expect(reserved.status, label).toBe(422);
      expect(reserved.body.errors![0]).toMatchObject({ loc: ['body', 'namespace', 1], msg: expect.stringContaining('"_"') });
    }
    // The store's primary key is a btree entry (at most 2,704 bytes): 1 KiB of UTF-8 each for the
    // namespace path and the key (was a 500 with long multi-byte text).
    const wide = (n: number) => '𝄞'.repeat(n); // 4 bytes and 2 UTF-16 units each
    const longKey = await call('PUT', 'items', { namespace: ['a'], key: wide(257), value: {} });
    expect(longKey.status).toBe(422);
    expect(longKey.body.errors![0]).toMatchObject({ loc: ['body', 'key'], msg: expect.stringContaining('1024 bytes') });
    const longPath = await call('PUT', 'items', { namespace: [wide(128), wide(128), wide(1)], key: 'k', value: {} });
    expect(longPath.status).toBe(422);
    expect(longPath.body.errors![0]).toMatchObject({ loc: ['body', 'namespace'], msg: expect.stringContaining('1024 bytes') });
    expect((await call('PUT', 'items', { namespace: ['a', wide(128), wide(125)], key: wide(256), value: {} })).status).toBe(204);
    const empty = await call('PUT', 'items', { namespace: [], key: 'k', value: {} });
    expect(empty.status).toBe(422);
    expect(empty.body.errors![0]!.loc).toEqual(['body', 'namespace']);
    const noKey = await call('PUT', 'items', { namespace: ['a'], key: '', value: {} });
    expect(noKey.status).toBe(422);
    expect(noKey.body.errors![0]!.loc).toEqual(['body', 'key']);
    const ttl = await call('PUT', 'items', { namespace: ['a'], key: 'k', value: {}, ttl: 5 });
    expect(ttl.status).toBe(422);
    expect(JSON.stringify(ttl.body.errors)).toContain('ttl');
    const notObject = await call('PUT', 'items', { namespace: ['a'], key: 'k', value: 'text' });
    expect(notObject.status).toBe(422);
    expect(JSON.stringify(notObject.body.errors)).toContain('value');
    const query = await call('POST', 'items/search', { namespace_prefix: [], query: 'tea' });
    expect(query.status).toBe(422);
    expect(JSON.stringify(query.body.errors)).toContain('query');
    const missingKey = await fetch(`${server.url}/v1/deepagents/store/items?namespace=a`, { headers: { 'X-Api-Key': aliceKey } });
    expect(missingKey.status).toBe(422);
    expect(JSON.stringify(await missingKey.json())).toContain('key');
    // GET takes the namespace and key as query parameters, and its errors say so.
    const get = async (query: string) => {
      const res = await fetch(`${server.url}/v1/deepagents/store/items?${query}`, { headers: { 'X-Api-Key': aliceKey } });
      return { status: res.status, errors: ((await res.json()) as { errors: { loc: unknown[]; msg: string }[] }).errors };
    };
    for (const [query, loc] of [['namespace=&key=k', ['query', 'namespace']], ['namespace=a..b&key=k', ['query', 'namespace']], ['namespace=a&key=', ['query', 'key']]] as const) {
      const res = await get(query);
      expect(res.status, query).toBe(422);
      expect(res.errors[0]!.loc, query).toEqual(loc);
      expect(JSON.stringify(res.errors), query).not.toContain('body');
    }
  });
});
