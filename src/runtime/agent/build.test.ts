// The built deep agent in-process: the user's local time reaches the system prompt of every model
// call, the definition tree is mounted read-only, and skills are discovered from it.
import type { BaseMessage } from '@langchain/core/messages';
import { InMemoryStore, MemorySaver } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { ScriptedChatModel, textOf } from '../models/scripted.js';
import { buildAgent } from './build.js';

/** The scripted model, remembering the system prompt of each call. */
class RecordingModel extends ScriptedChatModel {
  readonly systemPrompts: string[] = [];
  override async *_streamResponseChunks(messages: BaseMessage[], options: this['ParsedCallOptions'], runManager?: never) {
    this.systemPrompts.push(messages.filter((m) => m.getType() === 'system').map(textOf).join('\n'));
    yield* super._streamResponseChunks(messages, options, runManager);
  }
}

describe('buildAgent', () => {
  it('puts the local date and time of user_timezone into the system prompt; reads skills from the tree', async () => {
    const model = new RecordingModel({ model: 'rec' });
    const agent = await buildAgent(
      {
        workspaceId: 'w',
        agentId: 'a',
        revision: 'r',
        instructions: 'Be brief.',
        modelId: 'scripted:rec',
        tools: [],
        subagents: [],
        files: { 'AGENTS.md': 'Be brief.', 'skills/greet/SKILL.md': '---\nname: greet\ndescription: Greets people warmly\n---\nSay hello.' },
      },
      {
        resolveModel: async () => model,
        findServer: async () => undefined,
        checkpointer: new MemorySaver(),
        store: new InMemoryStore(),
        toolLimits: { connectTimeoutMs: 1000, callTimeoutMs: 1000 },
      },
    );
    const result = await agent.graph.invoke({ messages: [{ role: 'user', content: '/call read_file {"file_path": "/agent/skills/greet/SKILL.md"}' }] } as never, {
      configurable: { thread_id: 't', user_timezone: 'Asia/Tokyo' },
    } as never);
    expect(model.systemPrompts).toHaveLength(2);
    for (const prompt of model.systemPrompts) {
      expect(prompt).toContain('Be brief.');
      expect(prompt).toContain("The user's local date and time:");
      expect(prompt).toContain('(Asia/Tokyo)');
      expect(prompt).toContain('Greets people warmly');
    }
    const messages = (result as { messages: BaseMessage[] }).messages;
    expect(textOf(messages.at(-1)!)).toContain('Say hello.');
    expect(agent.tools.map((t) => t.name)).toContain('read_file');
  });
});
