// `hangar chat` against a real server: tokens on standard output, tool calls and the thread id on
// standard error, and --thread continues the conversation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat } from '../../src/cli/chat.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createAgent } from './support.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t) }, out, err };
}

describe('hangar chat', () => {
  it('streams the answer token by token, shows tool calls, prints the thread id; --thread continues', async () => {
    const name = `chatty-${Date.now()}`;
    const agentId = await createAgent(server, { name });
    const first = capture();
    const { threadId } = await chat({ baseUrl: server.url, apiKey: server.adminKey, agent: name, message: 'hello terminal' }, first.io);
    expect(first.out.join('')).toBe('You said: hello terminal\n');
    expect(first.out.length).toBeGreaterThan(3); // one write per token
    expect(first.err.join('')).toContain(`thread: ${threadId}`);

    const second = capture();
    await chat(
      { baseUrl: server.url, apiKey: server.adminKey, agent: agentId, thread: threadId, message: '/call write_file {"file_path": "/a.txt", "content": "x"}' },
      second.io,
    );
    const err = second.err.join('');
    expect(err).toContain('→ write_file(');
    expect(err).toContain('← write_file: ');
    expect(second.out.join('')).toMatch(/^Done\.\nwrite_file: /);
    const state = await server.client.GET('/v1/deepagents/threads/{thread_id}/state', { params: { path: { thread_id: threadId } } });
    // human, answer, human, tool call, tool result, answer
    expect((state.data!.values.messages as unknown[]).length).toBe(6);
  });

  it('an unknown agent name is a readable error', async () => {
    await expect(chat({ baseUrl: server.url, apiKey: server.adminKey, agent: 'nobody-has-this-name', message: 'hi' }, capture().io)).rejects.toThrow(
      'no agent named "nobody-has-this-name"',
    );
  });
});
