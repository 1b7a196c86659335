// What the thread service needs to read a thread's graph state (implemented by the runtime over
// LangGraph's checkpointer, so core does not depend on how checkpoints are stored).

/** A thread's state at one checkpoint, in wire form. */
export interface ThreadState {
  values: Record<string, unknown>;
  /** Nodes that run next (empty when the graph is at rest). */
  next: string[];
  /** Pending interrupts, each `{id, value}`. */
  interrupts: { id: string | null; value: unknown }[];
  /**
   * The tasks that run next, with the interrupts each waits on, and the error of one that failed
   * (LangGraph's `tasks`; `error` is JSON, the failed run's `{code, error, message}`).
   */
  tasks: { id: string; name: string; interrupts: { id: string | null; value: unknown }[]; error: string | null }[];
  checkpoint: CheckpointRef | null;
  parent_checkpoint: CheckpointRef | null;
  metadata: Record<string, unknown>;
  created_at: string | null;
}

/** Where a state is in a thread's checkpoints (LangGraph's `Checkpoint`; `checkpoint_map` always null). */
export interface CheckpointRef {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  checkpoint_map: null;
}

/** Which past states to read (LangGraph's history filters). */
export interface HistoryFilter {
  /** Only states older than this checkpoint. */
  before?: string | undefined;
  /** Only this checkpoint. */
  checkpointId?: string | undefined;
  /** Only states whose checkpoint metadata contains these keys and values. */
  metadata?: Record<string, unknown> | undefined;
}

/** Reads the checkpoints of threads (a thread's go with it: migration 2300). */
export interface ThreadStateReader {
  current(threadId: string): Promise<ThreadState>;
  /** The state at one checkpoint of the thread; undefined when the thread has no such checkpoint. */
  at(threadId: string, checkpointId: string): Promise<ThreadState | undefined>;
  history(threadId: string, limit: number, filter?: HistoryFilter): Promise<ThreadState[]>;
  /** Delete the checkpoints run `runId` wrote into the thread (a rollback: as if it never started). */
  rollback(threadId: string, runId: string): Promise<void>;
  /** Copy every checkpoint of `from` to the new thread `to`. */
  copy(from: string, to: string): Promise<void>;
  /**
   * Write `values` into the thread's state through its agent's graph (reducers apply), as if node
   * `asNode` had returned them (LangGraph's `updateState`).
   */
  update(target: AgentGraphTarget, values: Record<string, unknown>, asNode: string | undefined): Promise<void>;
  /** The drawable graph of an agent at a revision (LangGraph's `{nodes, edges}`). */
  graph(target: Omit<AgentGraphTarget, 'threadId'>, xray: boolean): Promise<Record<string, unknown>>;
}

/** Which agent graph, at which revision, for which thread. */
export interface AgentGraphTarget {
  workspaceId: string;
  agentId: string;
  revision: string;
  threadId: string;
}
