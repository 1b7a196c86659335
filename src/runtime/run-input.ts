// The validated body of a run request as the runtime keeps it (the `input` column of a run).
import type { StreamMode } from './events/types.js';

/** Roles a run message may have. */
export const MESSAGE_ROLES = ['user', 'assistant', 'system', 'tool'] as const;

/** One input message. */
export interface RunMessage {
  role: (typeof MESSAGE_ROLES)[number];
  content: string;
  /** The client's id for the message, kept in the thread's state. */
  id?: string;
}

/** What a run was asked to do. */
export interface RunInput {
  messages: RunMessage[];
  stream_mode: StreamMode[];
  stream_subgraphs: boolean;
  user_timezone: string | null;
  /** LangGraph's `Command`: a resume of the thread's pending interrupt, and/or `goto` and `update`. */
  command?: { resume?: unknown; goto?: string | string[] | undefined; update?: Record<string, unknown> | undefined } | undefined;
  /** No input: continue from the thread's checkpoint (a LangGraph client's `input: null`). */
  continue?: boolean | undefined;
  /**
   * LangGraph's `checkpoint` / `checkpoint_id`: the run starts from this past checkpoint of the thread
   * (a fork: its checkpoint's parent is this one), not from the latest.
   */
  checkpoint_id?: string | undefined;
  /** Nodes to pause before / after (`"*"`: every node), LangGraph's breakpoints. */
  interrupt_before?: string[] | '*' | undefined;
  interrupt_after?: string[] | '*' | undefined;
  /** From the thread's options: writes under /memories/ do not wait for approval. */
  skip_memory_write_protection?: boolean | undefined;
  /** LangGraph's `config.recursion_limit`: most graph steps this run may take (at most the server's `HANGAR_RECURSION_LIMIT`). */
  recursion_limit?: number | undefined;
  /** `cancel`: the run is cancelled when the client that started it goes away. */
  on_disconnect?: 'cancel' | 'continue' | undefined;
}

/** Input messages in the form LangGraph's message reducer accepts. */
export function toGraphMessages(messages: RunMessage[]): Record<string, unknown>[] {
  return messages.map((m, i) =>
    m.role === 'tool'
      ? // A tool message needs the call it answers; a bare one from a client answers no known call.
        { role: 'tool', content: m.content, tool_call_id: `client_${i}` }
      : { role: m.role, content: m.content, ...(m.id !== undefined ? { id: m.id } : {}) },
  );
}
