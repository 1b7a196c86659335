// The graph the LangGraph server loads (`./graph.ts:graph`); the server supplies its own checkpointer.
import { benchAgent } from './agent.js';

export const graph = (await benchAgent()).graph;
