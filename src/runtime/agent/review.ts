// Human review of tool calls: Hangar's own after-model hook in place of langchain's
// human-in-the-loop middleware. langchain's keeps only the rejected calls of a batch as soon as one
// call is rejected (dropping the approved and edited ones, and the calls that needed no approval),
// and knows no `respond`. Here every decision applies to its own call (hosted-current.md
// "Decisions"): approve runs it as proposed, edit runs it edited, reject answers it with an error
// tool message, respond with a successful one carrying the reviewer's text; calls that needed no
// approval run as usual. The agent's router sends only the calls still unanswered to the tool node,
// so the model then sees every result. The interrupt value is langchain's (`actionRequests`,
// `reviewConfigs`), so approvals.ts and every stored pause read the same.
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { ToolCall } from '@langchain/core/messages/tool';
import { interrupt } from '@langchain/langgraph';
import { createMiddleware } from 'langchain';
import type { InterruptOnRule } from './approvals.js';

/** A decision as the hook receives it (approvals.ts `toMiddlewareResume`). */
export interface ReviewDecision {
  type: 'approve' | 'edit' | 'reject' | 'respond';
  editedAction?: { name: string; args: Record<string, unknown> };
  message?: string;
}

/** What the calls of `message` become under `decisions` (one per call of `reviewed`, in order). */
export function applyDecisions(
  message: AIMessage,
  reviewed: ToolCall[],
  decisions: ReviewDecision[],
  rules: Record<string, InterruptOnRule>,
): { calls: ToolCall[]; replies: ToolMessage[] } {
  if (!Array.isArray(decisions) || decisions.length !== reviewed.length) {
    throw new Error(`expected ${reviewed.length} decisions (one per reviewed tool call), got ${Array.isArray(decisions) ? decisions.length : typeof decisions}`);
  }
  const byId = new Map<string | undefined, ToolCall>();
  const replies: ToolMessage[] = [];
  for (const [i, decision] of decisions.entries()) {
    const call = reviewed[i]!;
    const allowed = rules[call.name]?.allowedDecisions ?? [];
    // `respond` is allowed wherever `reject` is (approvals.ts `approvalToWire`).
    const kind = decision.type === 'respond' ? 'reject' : decision.type;
    if (!(allowed as string[]).includes(kind)) throw new Error(`decision ${decision.type} is not allowed for tool ${call.name}`);
    switch (decision.type) {
      case 'approve':
        break;
      case 'edit': {
        const edited = decision.editedAction;
        if (!edited || typeof edited.name !== 'string' || !edited.args || typeof edited.args !== 'object') throw new Error(`an edit of ${call.name} needs edited name and args`);
        byId.set(call.id, { type: 'tool_call', name: edited.name, args: edited.args, id: call.id });
        break;
      }
      case 'reject':
        replies.push(
          new ToolMessage({
            content: decision.message ?? `User rejected the tool call for \`${call.name}\` with id ${call.id}`,
            name: call.name,
            tool_call_id: call.id!,
            status: 'error',
          }),
        );
        break;
      case 'respond':
        replies.push(new ToolMessage({ content: decision.message ?? '', name: call.name, tool_call_id: call.id!, status: 'success' }));
        break;
      default:
        throw new Error(`unknown decision ${JSON.stringify(decision)}`);
    }
  }
  return { calls: (message.tool_calls ?? []).map((c) => byId.get(c.id) ?? c), replies };
}

/** The middleware asking a reviewer about the calls `interruptOn` names (none: no middleware). */
export function reviewMiddleware(interruptOn: Record<string, InterruptOnRule>) {
  return createMiddleware({
    name: 'HangarToolReview',
    afterModel: {
      canJumpTo: ['model'],
      hook: async (state, runtime) => {
        const messages = state.messages as BaseMessage[];
        const last = [...messages].reverse().find((m) => AIMessage.isInstance(m)) as AIMessage | undefined;
        if (!last?.tool_calls?.length) return undefined;
        const reviewed: ToolCall[] = [];
        for (const call of last.tool_calls) {
          const rule = interruptOn[call.name];
          if (rule && (!rule.when || (await rule.when({ toolCall: call, runtime })))) reviewed.push(call);
        }
        if (reviewed.length === 0) return undefined;
        const answer = interrupt({
          actionRequests: reviewed.map((call) => ({
            name: call.name,
            args: call.args,
            description: rule(interruptOn, call).description?.(call) ?? `Tool execution requires approval\n\nTool: ${call.name}\nArgs: ${JSON.stringify(call.args, null, 2)}`,
          })),
          reviewConfigs: reviewed.map((call) => ({ actionName: call.name, allowedDecisions: rule(interruptOn, call).allowedDecisions })),
        }) as { decisions?: ReviewDecision[] } | undefined;
        const { calls, replies } = applyDecisions(last, reviewed, answer?.decisions as ReviewDecision[], interruptOn);
        last.tool_calls = calls; // the same message (same id): the reducer replaces it
        // With every call answered already nothing is left for the tool node: back to the model.
        const answered = new Set(replies.map((r) => r.tool_call_id));
        const pending = calls.some((c) => !answered.has(c.id!));
        return { messages: [last, ...replies], ...(pending ? {} : { jumpTo: 'model' as const }) };
      },
    },
  });
}

function rule(interruptOn: Record<string, InterruptOnRule>, call: ToolCall): InterruptOnRule {
  return interruptOn[call.name]!;
}
