// Executing one claimed run: build (or reuse) its agent, stream the graph, append every event to the
// run's log, and report how the run ended.
import type { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { BuiltAgent } from './agent/build.js';
import type { RunEventWriter } from './events/hub.js';
import type { StreamMode } from './events/types.js';
import type { ClaimedRun, RunOutcome } from './queue.js';
import { toGraphMessages } from './run-input.js';
import { graphModes, hasInterrupt, translate } from './stream/translate.js';

/** Everything one execution needs. */
export interface ExecuteOptions {
  run: ClaimedRun;
  writer: RunEventWriter;
  /** Builds or reuses the agent; its failure (unknown model, deleted agent) fails the run. */
  agent: () => Promise<BuiltAgent>;
  callbacks: (agent: BuiltAgent) => Promise<BaseCallbackHandler[]>;
  signal: AbortSignal;
  recursionLimit: number;
  durability: 'async' | 'sync' | 'exit';
}

/** Run the graph to its end; never throws (a failure is an `error` event and an `error` outcome). */
export async function executeRun(options: ExecuteOptions): Promise<RunOutcome> {
  const { run, writer } = options;
  writer.append({ kind: 'metadata', data: { run_id: run.id, attempt: run.attempt } });
  try {
    const agent = await options.agent();
    const modes = new Set<StreamMode>(run.input.stream_mode);
    const ctx = { modes, streamSubgraphs: run.input.stream_subgraphs, tools: () => agent.tools };
    const stream = await agent.graph.stream({ messages: toGraphMessages(run.input.messages) } as never, {
      configurable: { thread_id: run.threadId, user_timezone: run.input.user_timezone, principal: run.principal },
      metadata: { assistant_id: run.agentId, run_id: run.id, thread_id: run.threadId, revision: run.revision },
      streamMode: graphModes(run.input.stream_mode),
      subgraphs: true,
      signal: options.signal,
      callbacks: await options.callbacks(agent),
      recursionLimit: options.recursionLimit,
      durability: options.durability,
    } as never);
    let interrupted = false;
    for await (const chunk of stream as AsyncIterable<unknown>) {
      if (hasInterrupt(chunk)) interrupted = true;
      const event = translate(chunk, ctx);
      if (event) writer.append(event);
    }
    const droppedTools = agent.dropped.map((d) => ({ name: d.name, mcp_server_url: d.mcpServerUrl, reason: d.reason }));
    return { status: 'success', thread: interrupted ? 'interrupted' : 'idle', droppedTools };
  } catch (error) {
    const failure = describe(error);
    writer.append({ kind: 'error', data: failure });
    return { status: 'error', thread: 'error', error: failure };
  }
}

/** `{error, message}` of a failure: the error class and what it says. */
export function describe(error: unknown): { error: string; message: string } {
  if (error instanceof Error) return { error: error.name === 'Error' ? error.constructor.name : error.name, message: error.message };
  return { error: 'Error', message: String(error) };
}
