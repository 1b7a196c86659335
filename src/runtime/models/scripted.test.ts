import { AIMessage, AIMessageChunk, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseModelId, resolveChatModel } from './resolve.js';
import { parseCalls, ScriptedChatModel, wordTokens } from './scripted.js';

describe('scripted model', () => {
  it('echoes a message without /call lines, streaming one chunk per word with word usage', async () => {
    const model = new ScriptedChatModel({ model: 'demo' });
    const chunks: AIMessageChunk[] = [];
    for await (const c of await model.stream([new SystemMessage('be brief'), new HumanMessage('hello there world')])) chunks.push(c);
    expect(chunks.map((c) => c.content)).toEqual(['You ', 'said: ', 'hello ', 'there ', 'world']);
    const last = chunks.at(-1)!;
    // In: "be brief" (2) + "hello there world" (3). Out: "You said: hello there world" (5).
    expect(last.usage_metadata).toEqual({ input_tokens: 5, output_tokens: 5, total_tokens: 10 });
  });

  it('turns /call lines into tool calls, then answers Done. with each result matched by id', async () => {
    const echo = tool(async ({ text }) => text, { name: 'echo', description: 'echo', schema: z.object({ text: z.string() }) });
    const model = new ScriptedChatModel({ model: 'demo' }).bindTools([echo]);
    const human = new HumanMessage('please\n/call echo {"text": "hi"}\n/call add {"a": 1, "b": 2}');
    const first = await model.invoke([human]);
    expect(first.tool_calls).toEqual([
      { type: 'tool_call', id: expect.stringMatching(/^call_[0-9a-f]{12}_1$/), name: 'echo', args: { text: 'hi' } },
      { type: 'tool_call', id: expect.stringMatching(/^call_[0-9a-f]{12}_2$/), name: 'add', args: { a: 1, b: 2 } },
    ]);
    const [echoId, addId] = first.tool_calls!.map((c) => c.id!);
    // Results are matched by id, not by order.
    const second = await model.invoke([
      human,
      new AIMessage({ content: '', tool_calls: first.tool_calls! }),
      new ToolMessage({ content: '3', tool_call_id: addId! }),
      new ToolMessage({ content: 'hi', tool_call_id: echoId! }),
    ]);
    expect(second.content).toBe('Done.\necho: hi\nadd: 3');
    expect(second.tool_calls ?? []).toEqual([]);
    // Deterministic: the same conversation gives the same ids.
    expect((await model.invoke([human])).tool_calls!.map((c) => c.id)).toEqual([echoId, addId]);
  });

  it('gives every tool call of a thread its own id, across human messages', async () => {
    const model = new ScriptedChatModel({ model: 'demo' });
    const ask = (id: string | undefined) => new HumanMessage({ content: '/call add {"a": 1, "b": 2}', ...(id ? { id } : {}) });
    const ids = new Set<string>();
    // With message ids (as LangGraph gives them), and without (position and text then decide).
    for (const withIds of [true, false]) {
      const first = ask(withIds ? 'msg-1' : undefined);
      const firstCalls = (await model.invoke([first])).tool_calls!;
      const thread = [
        first,
        new AIMessage({ content: '', tool_calls: firstCalls }),
        new ToolMessage({ content: '3', tool_call_id: firstCalls[0]!.id! }),
        new AIMessage('Done.\nadd: 3'),
        ask(withIds ? 'msg-2' : undefined),
      ];
      const secondCalls = (await model.invoke(thread)).tool_calls!;
      expect(secondCalls).toHaveLength(1);
      expect(secondCalls[0]!.id).not.toBe(firstCalls[0]!.id);
      ids.add(firstCalls[0]!.id!).add(secondCalls[0]!.id!);
    }
    expect(ids.size).toBe(4);
  });

  it('parses args that are not JSON into {input}', () => {
    expect(parseCalls('/call ls /tmp\nnot a call\n/call noargs', 'abc')).toEqual([
      { id: 'call_abc_1', name: 'ls', args: { input: '/tmp' } },
      { id: 'call_abc_2', name: 'noargs', args: {} },
    ]);
  });

  it('word tokens concatenate back to the text', () => {
    const text = 'Done.\necho: hi  there\n';
    expect(wordTokens(text).join('')).toBe(text);
  });

  it('resolves scripted:<name> with delay_ms from saved parameters', async () => {
    expect(parseModelId('scripted:demo')).toEqual({ provider: 'scripted', model: 'demo' });
    expect(parseModelId('openai:gpt-4o:2024')).toEqual({ provider: 'openai', model: 'gpt-4o:2024' });
    expect(parseModelId('nocolon')).toBeUndefined();
    const model = await resolveChatModel({ provider: 'scripted', model: 'demo', params: { delay_ms: 3 } }, { timeoutMs: 1000, maxRetries: 0 });
    expect(model).toBeInstanceOf(ScriptedChatModel);
    expect((model as ScriptedChatModel).delayMs).toBe(3);
    expect((model as ScriptedChatModel).model).toBe('demo');
  });
});
