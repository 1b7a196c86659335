// A thread's state read straight from its checkpoints, so that it stays readable after its agent
// is deleted (no graph needed).
import { uuid5, type BaseCheckpointSaver, type CheckpointTuple } from '@langchain/langgraph-checkpoint';
import type { CheckpointRef, HistoryFilter, ThreadState, ThreadStateReader } from '../core/threads/state.js';
import { toWire } from './stream/serialize.js';
import { interruptsToWire } from './stream/translate.js';

const BRANCH = 'branch:to:';
/** LangGraph's channel of pending `Send`s (`TASKS` in its constants). */
const TASKS = '__pregel_tasks';

/** A failed task's error until the thread service puts its run's error there. */
export const TASK_FAILED = JSON.stringify({ error: 'Error', message: 'the task failed' });

/** The state of a checkpoint in wire form. */
export function stateOf(tuple: CheckpointTuple | undefined): ThreadState {
  if (!tuple) return { values: {}, next: [], interrupts: [], tasks: [], checkpoint: null, parent_checkpoint: null, metadata: {}, created_at: null };
  const values: Record<string, unknown> = {};
  const next: string[] = [];
  for (const [channel, value] of Object.entries(tuple.checkpoint.channel_values)) {
    // LangGraph keeps "which node runs next" in branch channels; they are not state.
    // Channels that hold nothing (LangChain's untracked `jumpTo`) are not state either: LangGraph
    // does not show them.
    if (channel.startsWith(BRANCH)) next.push(channel.slice(BRANCH.length));
    else if (!channel.startsWith('__') && value !== undefined) values[channel] = toWire(value);
  }
  // Nodes started by a `Send` (the agent's `tools` node, one per batch of tool calls) wait in
  // LangGraph's tasks channel, not in a branch channel: a run stopped before them (`interruptBefore:
  // ["tools"]`) has them next.
  const sends = tuple.checkpoint.channel_values[TASKS];
  const pushed = (Array.isArray(sends) ? sends : []).map((send, index) => ({ name: (send as { node?: unknown } | null)?.node, index })).filter((p): p is { name: string; index: number } => typeof p.name === 'string');
  const writes = tuple.pendingWrites ?? [];
  const pending = writes.filter(([, channel]) => channel === '__interrupt__');
  const interrupts = interruptsToWire(pending.flatMap(([, , value]) => (Array.isArray(value) ? value : [value])));
  // LangGraph's `tasks`: one per node that runs next, with the interrupts it waits on and whether
  // it failed. A node's task id is LangGraph's own (of the node, the step and the checkpoint), so
  // that writes find their task. A failure's own message (a provider's, say) is not shown: it can
  // repeat part of a key; the thread service puts the run's error there (`{code, error, message}`).
  const failed = new Set(writes.filter(([, channel]) => channel === '__error__').map(([taskId]) => taskId));
  const step = (typeof tuple.metadata?.step === 'number' ? tuple.metadata.step : -1) + 1;
  const byPull = next.map((name) => ({ id: pullTaskId(name, step, tuple.checkpoint.id), name }));
  const byPush = pushed.map(({ name, index }) => ({ id: pushTaskId(name, step, index, tuple.checkpoint.id), name }));
  // A sent task that already wrote its result (before another one stopped the step) is not next.
  const done = new Set(writes.filter(([, channel]) => channel !== '__error__' && channel !== '__interrupt__').map(([taskId]) => taskId));
  for (const task of byPush) if (!done.has(task.id)) next.push(task.name);
  const byNode = [...byPull, ...byPush];
  // Writes of a task that is none of these (none known today) keep the old guess of their node.
  const known = new Set(byNode.map((t) => t.id));
  const others = [...new Set([...pending.map(([taskId]) => taskId), ...failed])].filter((id) => !known.has(id)).map((id, i) => ({ id, name: next[i] ?? next[0] ?? '' }));
  const tasks = [...byNode, ...others].map(({ id, name }) => ({
    id,
    name,
    interrupts: interruptsToWire(pending.filter(([t]) => t === id).flatMap(([, , value]) => (Array.isArray(value) ? value : [value]))),
    error: failed.has(id) ? TASK_FAILED : null,
  }));
  return {
    values,
    next,
    interrupts,
    tasks,
    checkpoint: ref(tuple.config),
    parent_checkpoint: tuple.parentConfig ? ref(tuple.parentConfig) : null,
    metadata: (toWire(tuple.metadata ?? {}) as Record<string, unknown>) ?? {},
    created_at: tuple.checkpoint.ts ?? null,
  };
}

/**
 * LangGraph's id of the task that runs node `name` at `step` after checkpoint `checkpointId`, for a
 * node at the top level triggered by its branch channel (how every node of an agent graph runs):
 * `_prepareSingleTask` in LangGraph's `pregel/algo`.
 */
function pullTaskId(name: string, step: number, checkpointId: string): string {
  return uuid5(JSON.stringify([name, step.toString(), name, '__pregel_pull', [`${BRANCH}${name}`]]), checkpointId);
}

/** LangGraph's id of the task that runs the `index`th `Send` (to node `name`) at `step`: `_prepareSingleTask`'s push case. */
function pushTaskId(name: string, step: number, index: number, checkpointId: string): string {
  return uuid5(JSON.stringify([name, step.toString(), name, '__pregel_push', index.toString()]), checkpointId);
}

function ref(config: CheckpointTuple['config']): CheckpointRef {
  const c = (config.configurable ?? {}) as Record<string, string>;
  return { thread_id: c.thread_id ?? '', checkpoint_ns: c.checkpoint_ns ?? '', checkpoint_id: c.checkpoint_id ?? '', checkpoint_map: null };
}

/** Thread state over a checkpointer. */
export function checkpointStateReader(checkpointer: BaseCheckpointSaver): Omit<ThreadStateReader, 'update' | 'graph' | 'rollback'> {
  return {
    async current(threadId) {
      return stateOf(await checkpointer.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: '' } }));
    },
    async at(threadId, checkpointId) {
      const tuple = await checkpointer.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: '', checkpoint_id: checkpointId } });
      return tuple ? stateOf(tuple) : undefined;
    },
    async history(threadId, limit, filter: HistoryFilter = {}) {
      const out: ThreadState[] = [];
      const config = { configurable: { thread_id: threadId, checkpoint_ns: '', ...(filter.checkpointId ? { checkpoint_id: filter.checkpointId } : {}) } };
      const options = {
        limit,
        ...(filter.before ? { before: { configurable: { checkpoint_id: filter.before } } } : {}),
        ...(filter.metadata && Object.keys(filter.metadata).length > 0 ? { filter: filter.metadata } : {}),
      };
      for await (const tuple of checkpointer.list(config, options)) out.push(stateOf(tuple));
      return out;
    },
    async copy(from, to) {
      const tuples: CheckpointTuple[] = [];
      for await (const tuple of checkpointer.list({ configurable: { thread_id: from } })) tuples.push(tuple);
      // Oldest first, so that each parent exists before its child; ids stay, so parent links hold.
      for (const tuple of tuples.reverse()) {
        const { checkpoint_ns = '', checkpoint_id } = (tuple.config.configurable ?? {}) as Record<string, string>;
        const parentId = (tuple.parentConfig?.configurable as Record<string, string> | undefined)?.checkpoint_id;
        const saved = await checkpointer.put(
          { configurable: { thread_id: to, checkpoint_ns, ...(parentId ? { checkpoint_id: parentId } : {}) } },
          tuple.checkpoint,
          tuple.metadata ?? ({} as never),
          tuple.checkpoint.channel_versions,
        );
        const byTask = new Map<string, [string, unknown][]>();
        for (const [taskId, channel, value] of tuple.pendingWrites ?? []) byTask.set(taskId, [...(byTask.get(taskId) ?? []), [channel, value]]);
        for (const [taskId, writes] of byTask) await checkpointer.putWrites({ configurable: { ...saved.configurable, checkpoint_id: checkpoint_id } }, writes, taskId);
      }
    },
  };
}
