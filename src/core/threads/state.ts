// What the thread service needs to read a thread's graph state (implemented by the runtime over
// LangGraph's checkpointer, so core does not depend on how checkpoints are stored).

/** A thread's state at one checkpoint, in wire form. */
export interface ThreadState {
  values: Record<string, unknown>;
  /** Nodes that run next (empty when the graph is at rest). */
  next: string[];
  /** Pending interrupts, each `{id, value}`. */
  interrupts: { id: string | null; value: unknown }[];
  checkpoint: { thread_id: string; checkpoint_ns: string; checkpoint_id: string } | null;
  parent_checkpoint: { thread_id: string; checkpoint_ns: string; checkpoint_id: string } | null;
  metadata: Record<string, unknown>;
  created_at: string | null;
}

/** Reads (and forgets) the checkpoints of threads. */
export interface ThreadStateReader {
  current(threadId: string): Promise<ThreadState>;
  history(threadId: string, limit: number): Promise<ThreadState[]>;
  forget(threadId: string): Promise<void>;
}
