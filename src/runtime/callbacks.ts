// The LangChain callbacks attached to every run. Tracing (issue 6) adds its handler here.
import type { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { ClaimedRun } from './queue.js';
import type { DroppedTool } from './tools/mcp.js';

/** What a callback factory knows about the run. */
export interface RunCallbackContext {
  run: ClaimedRun;
  /** The agent's name at the run's revision. */
  agentName?: string | undefined;
  /** The main model's name, as reported by the model. */
  modelName: string;
  /** Whether the run has been cancelled (its abort reason says so); what fails after that was stopped. */
  cancelled?: (() => boolean) | undefined;
  /** Configured tools left out because their server does not expose them (or is down). */
  droppedTools?: readonly DroppedTool[];
}

/** A source of callbacks for a run (for example the tracer). */
export type CallbackFactory = (context: RunCallbackContext) => BaseCallbackHandler[] | Promise<BaseCallbackHandler[]>;

/** The callbacks of one run: every registered factory's handlers, in order. */
export async function runCallbacks(factories: readonly CallbackFactory[], context: RunCallbackContext): Promise<BaseCallbackHandler[]> {
  const lists = await Promise.all(factories.map((f) => f(context)));
  return lists.flat();
}

/**
 * The run is over: wait until handlers that write in the background (the tracer) have stored what
 * the run reported (`finish`, else `flush`). The worker calls it after the run is settled and its
 * stream ended, so a trace's last write is not on the run's path. Never throws.
 */
export async function settleCallbacks(handlers: readonly BaseCallbackHandler[]): Promise<void> {
  await Promise.all(
    handlers.map((h) => {
      const handler = h as { finish?: () => Promise<void>; flush?: () => Promise<void> };
      return Promise.resolve(handler.finish ? handler.finish() : handler.flush?.()).catch(() => undefined);
    }),
  );
}
