// Deadlines Hangar enforces itself, whatever a provider or its client library does: a run-level limit,
// and around every model call an overall limit (all of the client's attempts included) and an idle
// limit between streamed chunks. Provider clients only time single attempts, and stop their clock once
// headers arrive, so a provider that stalls mid-stream would otherwise hold a run (and its thread)
// forever.
//
// Model calls are watched through LangChain callbacks (start, each new token, end or error), which
// every chat model of every provider reports and which reach subagents' calls too. When a limit is
// crossed the run's AbortSignal is aborted with a coded reason: LangChain and the provider clients
// abort the HTTP request on that signal, the graph stops, and the run ends with the reason's code.
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { RunFailureError } from './failures.js';

/** The limits of one run, in milliseconds. */
export interface RunDeadlines {
  /** The whole run, from the moment a worker starts it. */
  runTimeoutMs: number;
  /** One model call from its start to its end, every retry included. */
  modelCallTimeoutMs: number;
  /** Silence between two streamed chunks of one model call (once the first chunk arrived). */
  modelIdleTimeoutMs: number;
}

/** The deadlines of one run: a signal to run under, and a callback handler that watches model calls. */
export class RunLimits {
  readonly signal: AbortSignal;
  readonly handler: BaseCallbackHandler;
  /**
   * Aborted by a deadline or by the parent. Not `AbortSignal.any`: in Node 20 a composite signal with
   * an abort listener is held in a process-wide set until one of its sources aborts, and LangChain
   * leaves listeners on a run's signal, so every run that ended normally (its sources never abort)
   * stayed in memory with its whole graph state.
   */
  private readonly controller = new AbortController();
  private expired: RunFailureError | undefined;
  private readonly onParentAbort: () => void;
  private readonly runTimer: NodeJS.Timeout;
  private readonly calls = new Map<string, { overall: NodeJS.Timeout; idle?: NodeJS.Timeout | undefined }>();

  /** `parent`: the run's own signal (cancel, shutdown); aborting it aborts `signal` with its reason. */
  constructor(
    private readonly parent: AbortSignal,
    private readonly deadlines: RunDeadlines,
  ) {
    this.signal = this.controller.signal;
    this.onParentAbort = () => this.controller.abort(this.parent.reason);
    if (this.parent.aborted) this.onParentAbort();
    else this.parent.addEventListener('abort', this.onParentAbort, { once: true });
    this.runTimer = setTimeout(
      () => this.expire(new RunFailureError('run_timeout', 'RunTimeout', `the run took longer than its limit of ${seconds(deadlines.runTimeoutMs)} and was stopped`)),
      deadlines.runTimeoutMs,
    );
    this.runTimer.unref();
    this.handler = new ModelCallWatcher(this);
  }

  /** Why Hangar stopped the run (a deadline), if it did. */
  get reason(): RunFailureError | undefined {
    return this.expired;
  }

  /** Stop every timer (the run is over). */
  dispose(): void {
    this.parent.removeEventListener('abort', this.onParentAbort);
    clearTimeout(this.runTimer);
    for (const id of [...this.calls.keys()]) this.callEnded(id);
  }

  /** @internal A model call started. */
  callStarted(id: string): void {
    const overall = setTimeout(
      () =>
        this.expire(
          new RunFailureError('model_timeout', 'ModelTimeout', `a model call took longer than ${seconds(this.deadlines.modelCallTimeoutMs)} (every attempt included)`),
        ),
      this.deadlines.modelCallTimeoutMs,
    );
    overall.unref();
    this.calls.set(id, { overall });
  }

  /** @internal A model call streamed a chunk: the idle clock starts again. */
  chunk(id: string): void {
    const call = this.calls.get(id);
    if (!call) return;
    clearTimeout(call.idle);
    call.idle = setTimeout(
      () =>
        this.expire(
          new RunFailureError('model_timeout', 'ModelTimeout', `the model provider's stream stalled: no data for ${seconds(this.deadlines.modelIdleTimeoutMs)}`),
        ),
      this.deadlines.modelIdleTimeoutMs,
    );
    call.idle.unref();
  }

  /** @internal A model call ended (answer or error). */
  callEnded(id: string): void {
    const call = this.calls.get(id);
    if (!call) return;
    clearTimeout(call.overall);
    clearTimeout(call.idle);
    this.calls.delete(id);
  }

  private expire(reason: RunFailureError): void {
    if (this.controller.signal.aborted) return;
    this.expired = reason;
    this.controller.abort(reason);
    this.dispose();
  }
}

/** The callback side of RunLimits: model call start, tokens, end. */
class ModelCallWatcher extends BaseCallbackHandler {
  name = 'hangar_model_deadlines';

  constructor(private readonly limits: RunLimits) {
    // Inline, not on LangChain's background queue: the clocks must start when the call does. Model
    // calls only: LangChain then skips this handler for every chain, agent and retriever step.
    super({ _awaitHandler: true, ignoreChain: true, ignoreAgent: true, ignoreRetriever: true, ignoreCustomEvent: true });
  }

  override handleChatModelStart(_llm: unknown, _messages: unknown, runId: string): void {
    this.limits.callStarted(runId);
  }

  override handleLLMStart(_llm: unknown, _prompts: unknown, runId: string): void {
    this.limits.callStarted(runId);
  }

  override handleLLMNewToken(_token: string, _idx: unknown, runId: string): void {
    this.limits.chunk(runId);
  }

  override handleLLMEnd(_output: unknown, runId: string): void {
    this.limits.callEnded(runId);
  }

  override handleLLMError(_error: unknown, runId: string): void {
    this.limits.callEnded(runId);
  }
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
