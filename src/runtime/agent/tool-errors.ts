// Tool failures as the model, the thread and the trace see them: the error's message only. langchain's
// tool node writes a failed call's error into the tool message, and for arguments that do not fit the
// tool's schema (an approval `edit` with `{"a": "forty"}`, say) its ToolInvocationError embeds the
// whole stack, with this server's file paths. This middleware, innermost around every tool call,
// answers such failures itself with a scrubbed message (src/core/errors.ts `scrubMessage`).
import { ToolMessage } from '@langchain/core/messages';
import { isGraphBubbleUp } from '@langchain/langgraph';
import { createMiddleware } from 'langchain';
import { scrubMessage } from '../../core/errors.js';

/** The text of a failed call of `call.name`: what failed and why, without stack or host paths. */
export function toolErrorText(error: unknown, call: { name: string; args?: unknown }): string {
  // langchain's ToolInvocationError keeps the tool's own error beside its stack-bearing message.
  const inner = (error as { toolError?: unknown } | undefined)?.toolError ?? error;
  const message = inner instanceof Error ? inner.message : String(inner);
  const args = JSON.stringify(call.args ?? {});
  return `Error invoking tool '${call.name}' with kwargs ${args.length > 300 ? `${args.slice(0, 299)}…` : args}: ${scrubMessage(message)}. Please fix the error and try again.`;
}

/** The middleware turning a failed tool call into an error tool message carrying only the message. */
export function toolErrorsMiddleware() {
  return createMiddleware({
    name: 'ToolErrors',
    wrapToolCall: async (request, handler) => {
      try {
        return await handler(request);
      } catch (error) {
        // Interrupts (approvals, authorization) and handoffs belong to LangGraph; a cancelled run ends.
        if (isGraphBubbleUp(error)) throw error;
        const signal = (request.runtime as { signal?: AbortSignal } | undefined)?.signal;
        if (signal?.aborted) throw error;
        const call = request.toolCall;
        return new ToolMessage({ content: toolErrorText(error, call), tool_call_id: call.id ?? '', name: call.name, status: 'error' });
      }
    },
  });
}
