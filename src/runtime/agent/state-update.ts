// What is wrong with a client's `updateState` before it reaches the graph: LangGraph's reducers throw
// deep inside (a 500) or, worse, write a state no run can read (`files: "nope"`, a tool reply to no
// call). Each problem names its field (`values.<key>…` or `as_node`), and nothing is written.
import { coerceMessageLikeToMessage, type BaseMessage } from '@langchain/core/messages';

/** One problem: where (under the request body) and what. */
export interface UpdateProblem {
  loc: (string | number)[];
  msg: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * The first problem of writing `values` as `asNode` into a state whose messages are `current`, for a
 * graph with `nodes`; undefined when the update is sound.
 */
export function checkStateUpdate(values: Record<string, unknown>, asNode: string | undefined, nodes: string[], current: BaseMessage[]): UpdateProblem | undefined {
  if (asNode !== undefined && !nodes.includes(asNode)) {
    return { loc: ['as_node'], msg: `no node ${JSON.stringify(asNode)} in the agent's graph; nodes: ${nodes.filter((n) => !n.startsWith('__')).join(', ')}` };
  }
  if ('messages' in values) {
    const raw = values.messages;
    const list = Array.isArray(raw) ? raw : [raw];
    const calls = new Set(current.flatMap((m) => ((m as { tool_calls?: { id?: string }[] }).tool_calls ?? []).map((c) => c.id)));
    for (const [i, item] of list.entries()) {
      const loc = Array.isArray(raw) ? ['values', 'messages', i] : ['values', 'messages'];
      if (!isObject(item) && typeof item !== 'string') return { loc, msg: 'a message is an object with type (or role) and content' };
      let message: BaseMessage;
      try {
        message = coerceMessageLikeToMessage(item as never);
      } catch (error) {
        return { loc, msg: `not a message: ${(error as Error).message.split('\n')[0]}` };
      }
      const content = message.content as unknown;
      if (typeof content !== 'string' && !Array.isArray(content)) return { loc: [...loc, 'content'], msg: 'content is a string or a list of content blocks' };
      for (const c of (message as { tool_calls?: { id?: string }[] }).tool_calls ?? []) calls.add(c.id);
      if (message.getType() === 'tool') {
        const id = (message as { tool_call_id?: string }).tool_call_id;
        if (!id || !calls.has(id)) return { loc: [...loc, 'tool_call_id'], msg: `a tool message must answer a tool call of an earlier AI message; no call has id ${JSON.stringify(id ?? null)}` };
      }
    }
  }
  if ('files' in values) {
    const files = values.files;
    if (!isObject(files)) return { loc: ['values', 'files'], msg: 'files is an object from path to file data ({content, created_at, modified_at}) or null to delete' };
    for (const [path, data] of Object.entries(files)) {
      if (data === null) continue;
      const loc = ['values', 'files', path];
      if (!path.startsWith('/')) return { loc, msg: 'a file path is absolute (starts with /)' };
      if (!isObject(data)) return { loc, msg: 'file data is an object {content, created_at, modified_at} (or null to delete the file)' };
      const content = data.content;
      const lines = Array.isArray(content) && content.every((l) => typeof l === 'string');
      if (!lines && typeof content !== 'string') return { loc: [...loc, 'content'], msg: 'content is a string or a list of lines' };
      for (const key of ['created_at', 'modified_at'] as const) {
        if (data[key] !== undefined && (typeof data[key] !== 'string' || Number.isNaN(Date.parse(data[key])))) return { loc: [...loc, key], msg: `${key} is an ISO timestamp` };
      }
    }
  }
  if ('todos' in values) {
    const todos = values.todos;
    if (!Array.isArray(todos) || !todos.every((t) => isObject(t) && typeof t.content === 'string' && typeof t.status === 'string')) {
      return { loc: ['values', 'todos'], msg: 'todos is a list of {content, status}' };
    }
  }
  return undefined;
}
