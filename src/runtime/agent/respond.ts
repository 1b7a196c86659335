// `respond`: the reviewer answers in the tool's place, and the model gets a *successful* tool reply
// with that text (the hosted product's definition). review.ts now writes that reply directly. Earlier
// versions carried a respond as a langchain reject whose message bore a private marker; threads
// checkpointed then still hold such messages, so this middleware still turns them into the
// successful reply before the model sees them, and their wire form is that reply too (serialize.ts).
import { ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { createMiddleware } from 'langchain';

/** Prefix of a reject message that stands for a `respond` (never shown to anyone: replaced before use). */
export const RESPOND_MARK = '\u2063hangar:respond\u2063'; // U+2063: jsonb refuses NUL

/** The successful tool replies that replace marked reject messages in `messages` (none: nothing to do). */
export function respondReplies(messages: BaseMessage[]): ToolMessage[] {
  const out: ToolMessage[] = [];
  for (const m of messages) {
    if (!ToolMessage.isInstance(m) || typeof m.content !== 'string' || !m.content.startsWith(RESPOND_MARK)) continue;
    out.push(new ToolMessage({ id: m.id!, content: m.content.slice(RESPOND_MARK.length), tool_call_id: m.tool_call_id, name: m.name!, status: 'success' }));
  }
  return out;
}

/** The middleware that makes a `respond` a successful tool reply for the model. */
export function respondMiddleware() {
  return createMiddleware({
    name: 'ReviewerRespond',
    // The approval middleware's reject jumps straight to the model call, past before-model hooks, so
    // the model's request is mended here. The checkpoint keeps the marked message; its wire form
    // (stream/serialize.ts) is the successful reply, so every reader sees that. No hook node is
    // added to the graph: an extra step per model call would cost every run.
    wrapModelCall: async (request, handler) => {
      const replies = new Map(respondReplies(request.messages as BaseMessage[]).map((r) => [r.id, r]));
      if (replies.size === 0) return handler(request);
      return handler({ ...request, messages: (request.messages as BaseMessage[]).map((m) => replies.get(m.id) ?? m) as never });
    },
  });
}
