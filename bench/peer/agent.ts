// The benchmark's deep agent, built by Hangar's own builder so that all three setups run the same
// graph: the scripted model, the built-in file tools, no tool servers.
import { InMemoryStore, MemorySaver, type BaseCheckpointSaver, type BaseStore } from '@langchain/langgraph';
import { buildAgent, type BuiltAgent } from '../../src/runtime/agent/build.js';
import { parseModelId, resolveChatModel } from '../../src/runtime/models/resolve.js';

/** The agent's instructions (also used for the Hangar agent). */
export const INSTRUCTIONS = 'You are a benchmark agent.';

/** The prompt of one two-step run: one tool call, then one answer. */
export const PROMPT = '/call ls {"path": "/"}';

/**
 * Build the benchmark agent in this process (in-memory checkpoints and store unless given). `delayMs`
 * pauses the scripted model before each token (as a saved model configuration's `delay_ms` does).
 */
export function benchAgent(storage: { checkpointer: BaseCheckpointSaver; store: BaseStore } = { checkpointer: new MemorySaver(), store: new InMemoryStore() }, delayMs = 0): Promise<BuiltAgent> {
  return buildAgent(
    { workspaceId: 'bench', agentId: 'bench', revision: 'bench', instructions: INSTRUCTIONS, modelId: 'scripted:bench', tools: [], subagents: [], files: { 'AGENTS.md': INSTRUCTIONS } },
    {
      resolveModel: async (id) => resolveChatModel({ ...parseModelId(id)!, params: { delay_ms: delayMs } }, { timeoutMs: 10_000, maxRetries: 0 }),
      findServer: async () => undefined,
      checkpointer: storage.checkpointer,
      store: storage.store,
      toolLimits: { connectTimeoutMs: 1_000, callTimeoutMs: 1_000 },
    },
  );
}
