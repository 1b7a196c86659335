// LangGraph stream chunks (`[namespace, mode, payload]`, streamed with subgraphs) → run events.
import { isBaseMessage } from '@langchain/core/messages';
import type { ToolInfo } from '../agent/build.js';
import type { RunEvent, StreamMode } from '../events/types.js';
import { approvalToWire } from '../agent/approvals.js';
import { messageToDict, toWire } from './serialize.js';

/** The graph stream modes behind the request's modes (`messages-tuple` is LangGraph's `messages`). */
export function graphModes(modes: StreamMode[]): ('values' | 'updates' | 'messages' | 'custom' | 'tasks')[] {
  const out = new Set<'values' | 'updates' | 'messages' | 'custom' | 'tasks'>(['updates']); // updates reveal interrupts
  for (const m of modes) out.add(m === 'messages-tuple' ? 'messages' : m);
  return [...out];
}

/** What a translation needs to know of the request and the agent. */
export interface TranslateContext {
  modes: ReadonlySet<StreamMode>;
  streamSubgraphs: boolean;
  /** The tools bound to the main model, for `values.tools`. */
  tools(): ToolInfo[];
}

/** Metadata keys of a `messages` event: node, model name, provider, run, thread and agent. */
const MESSAGE_METADATA_KEYS = [
  'langgraph_node',
  'langgraph_step',
  'langgraph_checkpoint_ns',
  'ls_provider',
  'ls_model_name',
  'ls_model_type',
  'run_id',
  'thread_id',
  'assistant_id',
  'tags',
] as const;

/** The event of one chunk, or undefined when the request did not ask for it. */
export function translate(chunk: unknown, ctx: TranslateContext): RunEvent | undefined {
  const [ns, mode, payload] = chunk as [string[], string, unknown];
  if (ns.length > 0 && !ctx.streamSubgraphs) return undefined;
  switch (mode) {
    case 'values': {
      if (!ctx.modes.has('values')) return undefined;
      const state = toWire(payload) as Record<string, unknown>;
      if (state[INTERRUPT] !== undefined) state[INTERRUPT] = interruptsToWire((payload as Record<string, unknown>)[INTERRUPT]);
      return { kind: 'values', ns, data: ns.length === 0 ? { ...state, tools: ctx.tools() } : state };
    }
    case 'updates': {
      if (!ctx.modes.has('updates')) return undefined;
      const data: Record<string, unknown> = {};
      for (const [node, update] of Object.entries(payload as Record<string, unknown>)) {
        data[node] = node === INTERRUPT ? interruptsToWire(update) : isEmptyUpdate(update) ? null : toWire(update);
      }
      return { kind: 'updates', ns, data };
    }
    case 'messages': {
      if (!ctx.modes.has('messages-tuple')) return undefined;
      const [message, metadata] = payload as [unknown, Record<string, unknown>];
      const meta: Record<string, unknown> = {};
      for (const key of MESSAGE_METADATA_KEYS) if (metadata[key] !== undefined) meta[key] = metadata[key];
      const dict = isBaseMessage(message) ? messageToDict(message, true) : (toWire(message) as Record<string, unknown>);
      return { kind: 'messages', ns, data: [dict, meta] };
    }
    case 'custom':
      // What a tool or node wrote with LangGraph's `config.writer` (LangGraph's `custom` mode).
      return ctx.modes.has('custom') ? { kind: 'custom', ns, data: toWire(payload) } : undefined;
    case 'tasks':
      // LangGraph's task events: a task starting (its input, what triggered it) and its result.
      return ctx.modes.has('tasks') ? { kind: 'tasks', ns, data: toWire(payload) } : undefined;
    default:
      return undefined;
  }
}

const INTERRUPT = '__interrupt__';

/** Pending interrupts on the wire: `[{id, value}]`, approval requests in snake_case (DESIGN §5). */
export function interruptsToWire(interrupts: unknown): { id: string | null; value: unknown }[] {
  return (Array.isArray(interrupts) ? interrupts : [interrupts]).map((i) => {
    const item = i as { id?: string; value?: unknown };
    return { id: item.id ?? null, value: toWire(approvalToWire(item.value)) };
  });
}

/** Whether an `updates` chunk asks for a human (an interrupt at the top level). */
export function hasInterrupt(chunk: unknown): boolean {
  const [ns, mode, payload] = chunk as [string[], string, unknown];
  return ns.length === 0 && mode === 'updates' && payload !== null && typeof payload === 'object' && '__interrupt__' in payload;
}

function isEmptyUpdate(update: unknown): boolean {
  // Middleware hooks that change nothing return `{key: undefined}`: still no update.
  return update === null || update === undefined || (typeof update === 'object' && !Array.isArray(update) && Object.values(update).every((v) => v === undefined));
}
