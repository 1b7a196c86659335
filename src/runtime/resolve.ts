// Ending a pending approval without running its tools (POST /threads/{id}/resolve-interrupt): each
// tool call waiting for a person gets a result saying it was not run, written as if the tool node
// had answered, so the conversation stays well-formed and the pause is gone from the thread's state.
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { BuiltAgent } from './agent/build.js';

/** What a tool call that a reviewer resolved without running answers. */
export const RESOLVED_TOOL_RESULT = 'Not run: a reviewer resolved this request without running the tool.';

/** Resolve the pending approval of `threadId` on `agent`'s graph. False when nothing was pending. */
export async function resolvePendingApproval(agent: BuiltAgent, threadId: string): Promise<boolean> {
  const config = { configurable: { thread_id: threadId } };
  const state = await agent.graph.getState(config as never);
  const pending = (state.tasks as { interrupts: unknown[] }[]).some((t) => t.interrupts.length > 0);
  if (!pending) return false;
  const messages = ((state.values as { messages?: BaseMessage[] }).messages ?? []) as BaseMessage[];
  const answered = new Set(messages.filter((m) => ToolMessage.isInstance(m)).map((m) => (m as ToolMessage).tool_call_id));
  const last = [...messages].reverse().find((m) => AIMessage.isInstance(m)) as AIMessage | undefined;
  const open = (last?.tool_calls ?? []).filter((c) => c.id && !answered.has(c.id));
  const results = open.map((c) => new ToolMessage({ content: RESOLVED_TOOL_RESULT, tool_call_id: c.id!, name: c.name, status: 'error' }));
  // As the tool node: what follows is the model's turn, as after any tool result.
  await agent.graph.updateState(config as never, { messages: results } as never, 'tools');
  return true;
}
