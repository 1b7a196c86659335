// Durable memory end to end: /memories/ is the agent's across threads (not another agent's),
// /memories/user/ is per agent and principal, and every write there waits for approval unless the
// thread skips memory write protection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, run, start } from '../runtime/support.js';
import { collect } from '../../src/client/stream.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const write = (path: string, content: string) => `/call write_file ${JSON.stringify({ file_path: path, content })}`;
const read = (path: string) => `/call read_file ${JSON.stringify({ file_path: path })}`;

async function say(threadId: string, agentId: string, content: string, apiKey = server.adminKey): Promise<string> {
  const stream = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content }] }, apiKey);
  expect(stream.status).toBe(200);
  return lastAiText(lastValues(await collect(stream)));
}

describe('durable memory', () => {
  it('a protected write pauses naming the path, stores nothing until approved, then is read from another thread of the same agent only', async () => {
    const agentId = await createAgent(server);
    const other = await createAgent(server);
    const threadA = await createThread(server, agentId);
    const { events } = await run(server, threadA, { agent_id: agentId, messages: [{ role: 'user', content: write('/memories/prefs.md', 'likes tea') }] });
    const pending = (lastValues(events).__interrupt__ as { value: { action_requests: { name: string; args: { file_path: string }; description: string }[] } }[])[0]!.value;
    expect(pending.action_requests[0]).toMatchObject({ name: 'write_file', args: { file_path: '/memories/prefs.md' } });
    expect(pending.action_requests[0]!.description).toContain('/memories/prefs.md');

    // Nothing stored yet: another thread of the agent does not see it.
    const threadB = await createThread(server, agentId);
    expect(await say(threadB, agentId, read('/memories/prefs.md'))).toMatch(/not found/i);

    const resumed = await run(server, threadA, { agent_id: agentId, command: { resume: { decisions: [{ type: 'approve' }] } } } as never);
    expect(lastAiText(lastValues(resumed.events))).toContain('write_file');
    const threadC = await createThread(server, agentId);
    expect(await say(threadC, agentId, read('/memories/prefs.md'))).toContain('likes tea');

    const otherThread = await createThread(server, other);
    expect(await say(otherThread, other, read('/memories/prefs.md'))).toMatch(/not found/i);
  });

  it('a rejected memory write stores nothing', async () => {
    const agentId = await createAgent(server);
    const threadA = await createThread(server, agentId);
    await run(server, threadA, { agent_id: agentId, messages: [{ role: 'user', content: write('/memories/secret.md', 'nope') }] });
    await run(server, threadA, { agent_id: agentId, command: { resume: { decisions: [{ type: 'reject', message: 'no' }] } } } as never);
    const threadB = await createThread(server, agentId);
    expect(await say(threadB, agentId, read('/memories/secret.md'))).toMatch(/not found/i);
  });

  it('with skip_memory_write_protection the write is stored at once; scratch files never pause', async () => {
    const agentId = await createAgent(server);
    const threadA = await createThread(server, agentId, { skip_memory_write_protection: true });
    const answer = await say(threadA, agentId, write('/memories/fast.md', 'no questions asked'));
    expect(answer).toContain('write_file');
    expect((await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: threadA } } })).data!.status).toBe('idle');
    const threadB = await createThread(server, agentId);
    expect(await say(threadB, agentId, read('/memories/fast.md'))).toContain('no questions asked');

    const scratch = await createThread(server, agentId);
    await say(scratch, agentId, write('/notes/todo.md', 'scratch'));
    expect((await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path: { thread_id: scratch } } })).data!.status).toBe('idle');
  });

  it('a thread update cannot turn off the protection it was created with, nor rewrite the metadata Hangar records', async () => {
    const agentId = await createAgent(server);
    const other = await createAgent(server);
    const threadId = await createThread(server, agentId);
    const path = { thread_id: threadId };
    const before = (await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path } })).data!.metadata;
    const refused: [string, unknown][] = [
      ['skip_memory_write_protection', true],
      ['is_test_run', true],
      ['assistant_id', other],
      ['graph_id', other],
      ['tenant_id', '00000000-0000-0000-0000-000000000000'],
      ['ls_user_id', 'someone-else'],
      ['skip_memory_write_protection', null], // removing it is a change too
    ];
    for (const [key, value] of refused) {
      const res = await server.client.PATCH('/v1/deepagents/threads/{thread_id}', { params: { path }, body: { metadata: { note: 'kept?', [key]: value } } });
      expect(res.response.status, key).toBe(422);
      expect(res.error).toMatchObject({ code: 'validation_failed', errors: [{ loc: ['body', 'metadata', key] }] });
    }
    // Nothing was written, not even the other key of a refused request.
    const after = (await server.client.GET('/v1/deepagents/threads/{thread_id}', { params: { path } })).data!.metadata;
    expect(after).toEqual(before);

    // Sending them back unchanged (a client writing the metadata it read) is fine.
    const same = await server.client.PATCH('/v1/deepagents/threads/{thread_id}', { params: { path }, body: { metadata: { ...before, note: 'yes' } } });
    expect(same.response.status).toBe(200);
    expect(same.data!.metadata).toEqual({ ...before, note: 'yes' });

    // And the protection still holds: a memory write pauses.
    const { events } = await run(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: write('/memories/x.md', 'x') }] });
    expect(lastValues(events).__interrupt__).toBeDefined();
  });

  it('/memories/user/ belongs to the agent and the calling principal', async () => {
    const agentId = await createAgent(server);
    const alice = await server.createKey({ role: 'member', principal: 'alice@example.com' });
    const bob = await server.createKey({ role: 'member', principal: 'bob@example.com' });
    const threadOf = async (key: string) => {
      const res = await server.clientFor(key).POST('/v1/deepagents/threads', { body: { agent_id: agentId, options: { skip_memory_write_protection: true } } });
      return res.data!.id;
    };
    await say(await threadOf(alice), agentId, write('/memories/user/name.md', 'Alice'), alice);
    expect(await say(await threadOf(alice), agentId, read('/memories/user/name.md'), alice)).toContain('Alice');
    expect(await say(await threadOf(bob), agentId, read('/memories/user/name.md'), bob)).toMatch(/not found/i);
  });
});
