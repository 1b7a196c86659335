// The LangChain callbacks attached to every run. Tracing (issue 6) adds its handler here.
import type { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { ClaimedRun } from './queue.js';

/** What a callback factory knows about the run. */
export interface RunCallbackContext {
  run: ClaimedRun;
  /** The main model's name, as reported by the model. */
  modelName: string;
}

/** A source of callbacks for a run (for example the tracer). */
export type CallbackFactory = (context: RunCallbackContext) => BaseCallbackHandler[] | Promise<BaseCallbackHandler[]>;

/** The callbacks of one run: every registered factory's handlers, in order. */
export async function runCallbacks(factories: readonly CallbackFactory[], context: RunCallbackContext): Promise<BaseCallbackHandler[]> {
  const lists = await Promise.all(factories.map((f) => f(context)));
  return lists.flat();
}
