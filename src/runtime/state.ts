// A thread's state read straight from its checkpoints, so that it stays readable after its agent
// is deleted (no graph needed).
import type { BaseCheckpointSaver, CheckpointTuple } from '@langchain/langgraph-checkpoint';
import type { ThreadState, ThreadStateReader } from '../core/threads/state.js';
import { toWire } from './stream/serialize.js';
import { interruptsToWire } from './stream/translate.js';

const BRANCH = 'branch:to:';

/** The state of a checkpoint in wire form. */
export function stateOf(tuple: CheckpointTuple | undefined): ThreadState {
  if (!tuple) return { values: {}, next: [], interrupts: [], checkpoint: null, parent_checkpoint: null, metadata: {}, created_at: null };
  const values: Record<string, unknown> = {};
  const next: string[] = [];
  for (const [channel, value] of Object.entries(tuple.checkpoint.channel_values)) {
    // LangGraph keeps "which node runs next" in branch channels; they are not state.
    if (channel.startsWith(BRANCH)) next.push(channel.slice(BRANCH.length));
    else if (!channel.startsWith('__')) values[channel] = toWire(value);
  }
  const interrupts = interruptsToWire(
    (tuple.pendingWrites ?? []).filter(([, channel]) => channel === '__interrupt__').flatMap(([, , value]) => (Array.isArray(value) ? value : [value])),
  );
  return {
    values,
    next,
    interrupts,
    checkpoint: ref(tuple.config),
    parent_checkpoint: tuple.parentConfig ? ref(tuple.parentConfig) : null,
    metadata: (toWire(tuple.metadata ?? {}) as Record<string, unknown>) ?? {},
    created_at: tuple.checkpoint.ts ?? null,
  };
}

function ref(config: CheckpointTuple['config']) {
  const c = (config.configurable ?? {}) as Record<string, string>;
  return { thread_id: c.thread_id ?? '', checkpoint_ns: c.checkpoint_ns ?? '', checkpoint_id: c.checkpoint_id ?? '' };
}

/** Thread state over a checkpointer. */
export function checkpointStateReader(checkpointer: BaseCheckpointSaver): ThreadStateReader {
  return {
    async current(threadId) {
      return stateOf(await checkpointer.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: '' } }));
    },
    async history(threadId, limit) {
      const out: ThreadState[] = [];
      for await (const tuple of checkpointer.list({ configurable: { thread_id: threadId, checkpoint_ns: '' } }, { limit })) out.push(stateOf(tuple));
      return out;
    },
    forget: (threadId) => checkpointer.deleteThread(threadId),
  };
}
