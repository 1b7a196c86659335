// Executing one claimed run: build (or reuse) its agent, stream the graph, append every event to the
// run's log, and report how the run ended.
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { CallbackManager } from '@langchain/core/callbacks/manager';
import { Command } from '@langchain/langgraph';
import { uuid6 } from '@langchain/langgraph-checkpoint';
import { SKIP_MEMORY_PROTECTION_KEY } from './agent/approvals.js';
import type { BuiltAgent } from './agent/build.js';
import type { RunEventWriter } from './events/hub.js';
import type { StreamMode } from './events/types.js';
import { RunLimits, type RunDeadlines } from './models/deadlines.js';
import { classifyFailure } from './models/failures.js';
import type { ClaimedRun, RunOutcome } from './queue.js';
import { toGraphMessages } from './run-input.js';
import { graphModes, hasInterrupt, translate } from './stream/translate.js';
import { ROOT_CHECKPOINT_KEY } from './storage.js';

/** Everything one execution needs. */
export interface ExecuteOptions {
  run: ClaimedRun;
  writer: RunEventWriter;
  /** Builds or reuses the agent; its failure (unknown model, deleted agent) fails the run. */
  agent: () => Promise<BuiltAgent>;
  /** The model its usage counts under when the agent could not be built (cancelled while built, failed at start). */
  usageModel?: (() => Promise<string | undefined>) | undefined;
  /** The run's callbacks (the tracer); without an agent when it could not be built (the trace then holds the failure). */
  callbacks: (agent: BuiltAgent | undefined) => Promise<BaseCallbackHandler[]>;
  signal: AbortSignal;
  recursionLimit: number;
  durability: 'async' | 'sync' | 'exit';
  /** Hangar's own deadlines (src/runtime/models/deadlines.ts); the agent's `run_timeout_seconds` overrides the run limit. */
  deadlines?: RunDeadlines | undefined;
}

/** Run the graph to its end; never throws (a failure is an `error` event and an `error` outcome). */
export async function executeRun(options: ExecuteOptions): Promise<RunOutcome> {
  const { run, writer } = options;
  // The first attempt's `metadata` was written when the run was accepted (so a queued run's stream
  // had it at once); a retry announces its attempt.
  if (run.lastSeq === 0 || run.attempt > 1) writer.append({ kind: 'metadata', data: { run_id: run.id, attempt: run.attempt } });
  const usage = new UsageCounter();
  let modelName = 'unknown';
  let limits: RunLimits | undefined;
  let built = false;
  const loop = new GraphLoopEnd();
  try {
    const agent = await options.agent();
    built = true;
    modelName = agent.modelName;
    if (options.deadlines) {
      limits = new RunLimits(options.signal, { ...options.deadlines, ...(agent.runTimeoutMs ? { runTimeoutMs: agent.runTimeoutMs } : {}) });
    }
    const signal = limits?.signal ?? options.signal;
    const modes = new Set<StreamMode>(run.input.stream_mode);
    const ctx = { modes, streamSubgraphs: run.input.stream_subgraphs, tools: () => agent.tools };
    // A resume continues from the pause; its placeholder messages are not input. A retried run whose
    // earlier attempt already checkpointed continues from that checkpoint (no input again).
    const retried = run.attempt > 1 && (await checkpointedBy(agent, run));
    // A fork starts from the past checkpoint it names; a retry that checkpointed goes on from its own.
    const forkFrom = retried ? undefined : run.input.checkpoint_id;
    const fresh = !retried && !run.input.command && !run.input.continue && forkFrom === undefined;
    // A fresh run on a thread with no checkpoint yet writes an empty root before its own, in the same
    // statement (ROOT_CHECKPOINT_KEY; the saver knows the thread had none: the checkpoint has no parent).
    const root = fresh && options.durability === 'exit' ? { [ROOT_CHECKPOINT_KEY]: uuid6(-1) } : {};
    const input = retried
      ? null
      : run.input.command
          ? new Command(run.input.command as never)
          : run.input.continue
            ? null
            : { messages: toGraphMessages(run.input.messages) };
    const stream = await agent.graph.stream(input as never, {
      configurable: {
        thread_id: run.threadId,
        ...(forkFrom !== undefined ? { checkpoint_id: forkFrom } : {}),
        ...root,
        user_timezone: run.input.user_timezone,
        principal: run.principal,
        // OAuth-backed tool calls use the principal's token scoped to this agent first (oauth-tools.ts).
        assistant_id: run.agentId,
        [SKIP_MEMORY_PROTECTION_KEY]: run.input.skip_memory_write_protection === true,
      },
      metadata: { assistant_id: run.agentId, run_id: run.id, thread_id: run.threadId, revision: run.revision },
      // The trace's root run is named after the agent (its id stays in metadata.assistant_id), so
      // traces are told apart, and found, by the agent's name.
      runName: agent.agentName,
      streamMode: graphModes(run.input.stream_mode),
      ...(run.input.interrupt_before ? { interruptBefore: run.input.interrupt_before } : {}),
      ...(run.input.interrupt_after ? { interruptAfter: run.input.interrupt_after } : {}),
      subgraphs: true,
      signal,
      callbacks: loop.watching([...(await options.callbacks(agent)), ...(limits ? [limits.handler] : [])]),
      recursionLimit: Math.min(run.input.recursion_limit ?? options.recursionLimit, options.recursionLimit),
      durability: options.durability,
    } as never);
    let interrupted = false;
    for await (const chunk of stream as AsyncIterable<unknown>) {
      if (hasInterrupt(chunk)) interrupted = true;
      usage.add(chunk);
      const event = translate(chunk, ctx);
      if (event) writer.append(event);
    }
    const droppedTools = agent.dropped.map((d) => ({ name: d.name, mcp_server_url: d.mcpServerUrl, reason: d.reason }));
    return { status: 'success', thread: interrupted ? 'interrupted' : 'idle', droppedTools, usage: usage.total(agent.modelName) };
  } catch (error) {
    // A stop (cancel, hand-back, deadline) rejects the stream at once, while the graph is still
    // saving what the run did so far (with `exit` durability, its only checkpoint): wait for that, so
    // the thread's next run or attempt, free once this returns, starts from it.
    if ((limits?.signal ?? options.signal).aborted) await loop.over(GRAPH_STOP_WAIT_MS);
    // No agent, so no model of its own: the usage counts under the model its agent names.
    if (!built && options.usageModel) modelName = (await options.usageModel().catch(() => undefined)) ?? modelName;
    // Cancelled (POST …/cancel, on_disconnect, another run's multitask strategy): not a failure.
    // Stopped to be handed back (this process is stopping): not over, so no `error` event; the worker
    // hands it back to the queue and another attempt continues its log.
    if (options.signal.reason instanceof RunCancelled || options.signal.reason instanceof RunHandedBack) return { status: 'interrupted', thread: 'idle', usage: usage.total(modelName) };
    // A deadline Hangar enforced names itself; so does a reason of ours for stopping (the event log
    // could not be written, shutdown); anything else is classified from the error.
    const reason: unknown = options.signal.aborted ? options.signal.reason : undefined;
    const failure = classifyFailure(limits?.reason ?? (reason instanceof Error ? reason : error));
    writer.append({ kind: 'error', data: failure });
    // The agent could not be built (an unknown model provider, a deleted agent): no graph ran, so
    // nothing was traced; the failure is traced here, so the run has a trace that says why.
    if (!built) await traceFailure(options, failure);
    return { status: failure.code === 'run_timeout' ? 'timeout' : 'error', thread: 'error', error: failure, usage: usage.total(modelName), cause: error };
  } finally {
    limits?.dispose();
  }
}

/** How long a stopped run waits for its graph to save what it did (it is stopped whatever then). */
const GRAPH_STOP_WAIT_MS = 10_000;

/**
 * When the graph's loop is over. Aborted, LangChain's stream rejects at once (it races every read with
 * the signal), while LangGraph's loop goes on to write the run's last checkpoint and only then fails
 * its root chain: this hears that failure (or the end), on the root chain only.
 */
class GraphLoopEnd extends BaseCallbackHandler {
  name = 'hangar_graph_loop_end';
  private started = false;
  private resolve!: () => void;
  private readonly ended = new Promise<void>((resolve) => (this.resolve = resolve));

  constructor() {
    // Inline: it only flips a flag.
    super({ _awaitHandler: true });
  }

  /**
   * The run's callbacks with this one added to the root chain alone (not inherited): the graph's
   * steps do not call it, so it costs nothing per step.
   */
  watching(handlers: BaseCallbackHandler[]): CallbackManager {
    const manager = new CallbackManager();
    manager.setHandlers(handlers, true);
    manager.addHandler(this, false);
    return manager;
  }

  override handleChainStart(_chain: unknown, _inputs: unknown, _runId: string, parentRunId?: string): void {
    if (parentRunId === undefined) this.started = true;
  }

  override handleChainEnd(_outputs: unknown, _runId: string, parentRunId?: string): void {
    if (parentRunId === undefined) this.resolve();
  }

  override handleChainError(_error: unknown, _runId: string, parentRunId?: string): void {
    if (parentRunId === undefined) this.resolve();
  }

  /** Resolves once the loop is over, at once if it never started, or after `ms` at the latest. */
  async over(ms: number): Promise<void> {
    if (!this.started) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.ended, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }
}

/** A trace of one root run that failed with `failure` (its callbacks are flushed by the worker, as any run's). */
async function traceFailure(options: ExecuteOptions, failure: { error: string; message: string }): Promise<void> {
  const { run } = options;
  try {
    const handlers = await options.callbacks(undefined);
    if (handlers.length === 0) return;
    const metadata = { assistant_id: run.agentId, run_id: run.id, thread_id: run.threadId, revision: run.revision };
    const manager = CallbackManager.configure(handlers, undefined, undefined, undefined, metadata);
    // Named after the agent id here; the tracer names a root after the agent when it knows the name.
    const root = await manager?.handleChainStart({ lc: 1, type: 'not_implemented', id: ['hangar', 'agent'] }, { messages: run.input.messages ?? [] }, undefined, undefined, undefined, undefined, run.agentId);
    const error = new Error(failure.message);
    error.name = failure.error;
    await root?.handleChainError(error);
  } catch {
    // Tracing never fails a run, nor changes how it failed.
  }
}

/**
 * Whether the thread's latest checkpoint was written by `run` (an earlier attempt of it) and holds
 * something to go on from (not only the empty root checkpoint written before it: ROOT_CHECKPOINT_KEY).
 */
async function checkpointedBy(agent: BuiltAgent, run: ClaimedRun): Promise<boolean> {
  const state = await agent.graph.getState({ configurable: { thread_id: run.threadId } } as never);
  if ((state.metadata as Record<string, unknown> | undefined)?.run_id !== run.id) return false;
  return Object.keys(state.values as Record<string, unknown>).length > 0 || state.next.length > 0;
}

/**
 * The node of a LangChain agent (and of each deepagents subagent) that calls the model: the only one
 * whose messages are new model answers. Others pass an answer on again — the approval middleware's
 * `after_model` hook re-emits the answer it asked about, with the decisions applied, in the run that
 * resumes it — and that answer's usage was counted by the run that got it.
 */
const MODEL_NODE = 'model_request';

/** Adds up the token usage of the model answers in `updates` chunks (subagents' too). */
class UsageCounter {
  private input = 0;
  private output = 0;

  add(chunk: unknown): void {
    const [, mode, payload] = chunk as [string[], string, unknown];
    if (mode !== 'updates' || !payload || typeof payload !== 'object') return;
    for (const [node, update] of Object.entries(payload)) {
      if (node !== MODEL_NODE) continue;
      const messages = (update as { messages?: unknown } | null)?.messages;
      if (!Array.isArray(messages)) continue;
      for (const m of messages) {
        const u = (m as { usage_metadata?: { input_tokens?: number; output_tokens?: number } }).usage_metadata;
        if (!u) continue;
        this.input += u.input_tokens ?? 0;
        this.output += u.output_tokens ?? 0;
      }
    }
  }

  total(model: string): { model: string; input_tokens: number; output_tokens: number } {
    return { model, input_tokens: this.input, output_tokens: this.output };
  }
}

/** The abort reason of a cancelled run. */
export class RunCancelled extends Error {
  constructor(runId: string) {
    super(`run ${runId} was cancelled`);
    this.name = 'RunCancelled';
  }
}

/** The abort reason of a run stopped to be handed to another worker (its process is stopping). */
export class RunHandedBack extends Error {
  constructor(runId: string) {
    super(`run ${runId} was handed back to the queue: the server is shutting down`);
    this.name = 'RunHandedBack';
  }
}
