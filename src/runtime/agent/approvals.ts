// Human approval of tool calls: `interrupt_config` rules and memory write protection, as the
// `interruptOn` map of review.ts's middleware (wired for the main agent and every subagent), and its
// interrupt payload in the snake_case wire form of DESIGN §5.
import type { ToolCall } from '@langchain/core/messages/tool';
import { BUILT_IN_TOOLS } from '../../core/agents/validate.js';
import { normalizeServerUrl, redactServerUrl } from '../../core/mcp-servers/url.js';
import type { ToolRef } from '../tools/mcp.js';
import { MEMORIES_ROOT } from './backend.js';

/** Decisions a reviewer may send on the wire. */
export const DECISION_TYPES = ['approve', 'edit', 'reject', 'respond'] as const;

/** A decision type on the wire. */
export type DecisionType = (typeof DECISION_TYPES)[number];

/**
 * Decisions a rule allows (review.ts). `respond` is allowed wherever `reject` is: the reviewer
 * answers in the tool's place instead of refusing it.
 */
const MIDDLEWARE_DECISIONS = ['approve', 'edit', 'reject'] as const;

/** The `configurable` key of a run telling whether memory writes skip approval. */
export const SKIP_MEMORY_PROTECTION_KEY = 'skip_memory_write_protection';

/** One `interruptOn` entry: which decisions a reviewer may send for a tool (review.ts). */
export interface InterruptOnRule {
  allowedDecisions: (typeof MIDDLEWARE_DECISIONS)[number][];
  description?: (toolCall: ToolCall) => string;
  when?: (input: { toolCall: ToolCall; runtime: unknown }) => boolean;
}

/** Whether `interruptConfig` asks for approval of `ref` (undefined when it says nothing). */
export function ruleFor(interruptConfig: Record<string, boolean>, ref: ToolRef): boolean | undefined {
  const url = normalizeServerUrl(ref.mcpServerUrl);
  let bare: boolean | undefined;
  for (const [key, value] of Object.entries(interruptConfig)) {
    const parts = key.split('::');
    if (parts.length === 1) {
      // A bare tool name is a fallback: a key naming the server wins over it.
      if (parts[0] === ref.name) bare = value;
      continue;
    }
    // Parts after the tool name (a server display name, say) are ignored.
    if (normalizeServerUrl(parts[0]!) === url && parts[1] === ref.name) return value;
  }
  return bare;
}

/**
 * The `interruptOn` map of an agent: every tool of `tools` (ref → the tool's name in the agent)
 * whose rule is true, plus the file tools when they write under /memories/ (unless the run's
 * thread skips memory write protection).
 */
export function interruptOnFor(tools: { ref: ToolRef; name: string }[], interruptConfig: Record<string, boolean>): Record<string, InterruptOnRule> {
  const out: Record<string, InterruptOnRule> = {};
  for (const { ref, name } of tools) {
    if (ruleFor(interruptConfig, ref) !== true) continue;
    out[name] = {
      allowedDecisions: [...MIDDLEWARE_DECISIONS],
      description: (call) => `Tool ${call.name} of ${redactServerUrl(ref.mcpServerUrl)} requires approval.\nArgs: ${JSON.stringify(call.args)}`,
    };
  }
  for (const fileTool of ['write_file', 'edit_file']) {
    if (interruptConfig[fileTool] === true) continue; // every write asks (below), not only memory writes
    out[fileTool] = {
      allowedDecisions: [...MIDDLEWARE_DECISIONS],
      when: ({ toolCall, runtime }) => isMemoryPath(filePathOf(toolCall)) && !skipsMemoryProtection(runtime),
      description: (call) => `${call.name === 'write_file' ? 'Write' : 'Edit'} durable memory ${filePathOf(call)} (kept across threads) requires approval.`,
    };
  }
  // A bare key naming a built-in tool (deepagents' file tools, `execute`, `write_todos`, `task`).
  for (const name of BUILT_IN_TOOLS) {
    if (interruptConfig[name] !== true || out[name]) continue;
    out[name] = {
      allowedDecisions: [...MIDDLEWARE_DECISIONS],
      description: (call) => `Built-in tool ${call.name} requires approval.\nArgs: ${JSON.stringify(call.args)}`,
    };
  }
  return out;
}

function filePathOf(call: ToolCall): string {
  const args = call.args as Record<string, unknown>;
  return typeof args.file_path === 'string' ? args.file_path : typeof args.path === 'string' ? args.path : '';
}

function isMemoryPath(path: string): boolean {
  // Normalise `//memories/../x` style tricks away before the prefix test.
  const clean = `/${path.split('/').filter((p) => p !== '' && p !== '.').join('/')}`;
  return clean === MEMORIES_ROOT.slice(0, -1) || clean.startsWith(MEMORIES_ROOT);
}

function skipsMemoryProtection(runtime: unknown): boolean {
  const configurable = (runtime as { configurable?: Record<string, unknown> } | undefined)?.configurable;
  return configurable?.[SKIP_MEMORY_PROTECTION_KEY] === true;
}

/** A reviewer's decision on the wire. */
export interface WireDecision {
  type: DecisionType;
  edited_action?: { name?: string | undefined; args: Record<string, unknown> } | undefined;
  message?: string | undefined;
}

/** An approval request on the wire (DESIGN §5). */
export interface WireApprovalRequest {
  action_requests: { name: string; args: unknown; description: string | null }[];
  review_configs: { action_name: string; allowed_decisions: DecisionType[] }[];
}

/** The wire form of an interrupt value: approval requests in snake_case, anything else as it is. */
export function approvalToWire(value: unknown): unknown {
  if (!value || typeof value !== 'object' || !('actionRequests' in value)) return value;
  const v = value as { actionRequests: { name: string; args: unknown; description?: string }[]; reviewConfigs: { actionName: string; allowedDecisions: string[] }[] };
  return {
    action_requests: v.actionRequests.map((a) => ({ name: a.name, args: a.args, description: a.description ?? null })),
    review_configs: v.reviewConfigs.map((r) => ({
      action_name: r.actionName,
      // `reject` allowed means a reviewer can also answer in the tool's place (see `respond` above).
      allowed_decisions: DECISION_TYPES.filter((d) => (d === 'respond' ? r.allowedDecisions.includes('reject') : r.allowedDecisions.includes(d))),
    })),
  } satisfies WireApprovalRequest;
}

/** Whether an interrupt value (wire form) is an approval request. */
export function isApprovalRequest(value: unknown): value is WireApprovalRequest {
  return !!value && typeof value === 'object' && Array.isArray((value as WireApprovalRequest).action_requests);
}

/**
 * What is wrong with `decisions` as the answer to `request`, or undefined when they fit: one
 * decision per action request, each of an allowed type, an `edit` with its `edited_action`.
 */
export function checkDecisions(request: WireApprovalRequest, decisions: WireDecision[], toolNames?: ReadonlySet<string>): string | undefined {
  const n = request.action_requests.length;
  if (decisions.length !== n) return `expected ${n} decision${n === 1 ? '' : 's'} (one per action request), got ${decisions.length}`;
  for (const [i, decision] of decisions.entries()) {
    const action = request.action_requests[i]!;
    const allowed = request.review_configs.find((r) => r.action_name === action.name)?.allowed_decisions ?? [];
    if (!allowed.includes(decision.type)) return `decision ${i} (${decision.type}) is not allowed for ${action.name}; allowed: ${allowed.join(', ')}`;
    if (decision.type === 'edit' && !decision.edited_action) return `decision ${i} is an edit without edited_action`;
    const renamed = decision.type === 'edit' ? decision.edited_action?.name : undefined;
    // An edit may call another tool instead, one the agent has: any other would only fail.
    if (renamed !== undefined && renamed !== action.name && toolNames && !toolNames.has(renamed)) {
      return `decision ${i} edits the call to tool "${renamed}", which neither this agent nor its subagents have`;
    }
    if (decision.type === 'respond' && typeof decision.message !== 'string') return `decision ${i} is a respond without message (the reviewer's answer)`;
  }
  return undefined;
}

/** The resume value review.ts expects for wire `decisions` answering `request`. */
export function toMiddlewareResume(request: WireApprovalRequest, decisions: WireDecision[]): { decisions: Record<string, unknown>[] } {
  return {
    decisions: decisions.map((d, i) => {
      switch (d.type) {
        case 'approve':
          return { type: 'approve' };
        case 'edit':
          return { type: 'edit', editedAction: { name: d.edited_action?.name ?? request.action_requests[i]!.name, args: d.edited_action?.args ?? {} } };
        case 'reject':
          return { type: 'reject', ...(d.message !== undefined ? { message: d.message } : {}) };
        case 'respond':
          return { type: 'respond', message: d.message ?? '' };
      }
    }),
  };
}
