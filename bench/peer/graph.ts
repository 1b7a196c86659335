// The graph the LangGraph server loads (`./graph.ts:graph`, and `./graph.ts:slow`); the server supplies its own checkpointer.
import { benchAgent } from './agent.js';

export const graph = (await benchAgent()).graph;

/** The same agent with a slow model (40 ms a token), for runs that must still be running when asked. */
export const slow = (await benchAgent(undefined, 40)).graph;
