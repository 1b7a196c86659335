// Hangar's own LangChain tracer: a callback handler that writes each agent run's tree to the trace
// store (directly, not over HTTP), in the same run model the LangSmith ingestion uses. The root run
// is written when it starts (so a running trace is visible as pending) and the whole tree when it ends.
import { BaseMessage } from '@langchain/core/messages';
import { BaseTracer, type Run } from '@langchain/core/tracers/base';
import { scrubMessage } from '../core/errors.js';
import type { RunBatch, RunCreate } from './run.js';

/**
 * Where the tracer writes: `services.tracing.record` bound to a workspace. `startsTrace` is the root
 * run id when the batch is the first root's start (the agent run's trace is recorded with it).
 */
export type TraceSink = (batch: RunBatch, startsTrace?: string) => Promise<void>;

/** Options of one traced agent run. */
export interface HangarTracerOptions {
  sink: TraceSink;
  /** Tracing project by name (thread metadata); the workspace default when absent. */
  projectName?: string | undefined;
  /** Merged into the root run's metadata (thread_id, run_id, assistant, `test_run`…). */
  metadata?: Record<string, unknown> | undefined;
  /** Added to the root run's tags (for example `test-run`). */
  tags?: string[] | undefined;
  /** Called when a write fails; tracing never fails the run. */
  onError?: (error: unknown) => void;
  /** The name of root runs (the agent's name); the run's own name when absent. */
  rootName?: string | undefined;
  /** Whether the run was cancelled (POST …/cancel and the like): what fails from then on was stopped, not failed. */
  cancelled?: (() => boolean) | undefined;
}

/** The `error` a run stopped by a cancel gets in memory; stored as no error and the tag `cancelled`. */
const CANCELLED = '\u2063hangar:cancelled\u2063';

/** A LangChain tracer that stores runs in Hangar's trace store. One instance per agent run. */
export class HangarTracer extends BaseTracer {
  name = 'hangar_tracer';
  /** Id of the first root run seen: the trace id of the agent run. */
  rootRunId: string | undefined;
  private writes: Promise<void> = Promise.resolve();

  constructor(private readonly options: HangarTracerOptions) {
    // Handlers run inline (not on LangChain's background queue) so that `flush()` after the run
    // covers every run; they only enqueue, the database writes happen off the run's path.
    super({ _awaitHandler: true });
  }

  /** Called once by `finish` (the run is over and its trace stored, or its writes failed). */
  onFinished: (() => void) | undefined;

  /** Wait until everything reported so far is stored. */
  flush(): Promise<void> {
    return this.writes;
  }

  /** The run is over: wait until its trace is stored, then report it finished. */
  async finish(): Promise<void> {
    try {
      await this.writes;
    } finally {
      this.onFinished?.();
      this.onFinished = undefined;
    }
  }

  /**
   * A failed run's `error` as traces keep it: the error's type and message, never its stack (server
   * paths); those are in the server log at debug level. A LangGraph pause keeps its payload, then
   * `GraphInterrupt`, which is how it is told from a failure below.
   */
  protected override stringifyError(error: unknown): string {
    if (this.options.cancelled?.()) return CANCELLED;
    if (!(error instanceof Error)) return scrubMessage(String(error));
    if (error.name === 'GraphInterrupt' || error.name === 'NodeInterrupt') return `${error.message}\n\nGraphInterrupt`;
    const type = error.name && error.name !== 'Error' ? error.name : error.constructor.name;
    return `${type}: ${scrubMessage(error.message)}`;
  }

  override async onRunCreate(run: Run): Promise<void> {
    if (run.parent_run_id !== undefined) return;
    const first = this.rootRunId === undefined;
    this.rootRunId ??= run.id;
    this.enqueue({ post: [this.toCreate(run, true)], patch: [] }, first ? run.id : undefined);
  }

  protected async persistRun(root: Run): Promise<void> {
    // Built when written, not here: this is called as the graph ends, and the tree's copy (a few ms
    // for a deep agent's run) would delay the run's end; the run's objects do not change after it.
    this.enqueue(() => {
      const post: RunCreate[] = [];
      const visit = (run: Run) => {
        post.push(this.toCreate(run, run.parent_run_id === undefined));
        for (const child of run.child_runs) visit(child);
      };
      visit(root);
      // A human-in-the-loop pause is not a failure: the paused node carries the interrupt as its
      // output, and the root is tagged so that paused traces are easy to find.
      if (post.some((r) => r.tags?.includes('interrupt'))) post[0]!.tags = [...new Set([...(post[0]!.tags ?? []), 'interrupted'])];
      return { post, patch: [] };
    });
  }

  /** Write `batch` after what was reported before it; a function is called when its turn comes, after pending I/O. */
  private enqueue(batch: RunBatch | (() => RunBatch), startsTrace?: string): void {
    this.writes = this.writes
      .then(async () => {
        if (typeof batch !== 'function') return this.options.sink(batch, startsTrace);
        await new Promise<void>((resolve) => setImmediate(resolve));
        return this.options.sink(batch(), startsTrace);
      })
      .catch((error: unknown) => this.options.onError?.(error));
  }

  private toCreate(run: Run, isRoot: boolean): RunCreate {
    const extra = (plain(run.extra ?? {}) ?? {}) as Record<string, unknown>;
    if (isRoot && this.options.metadata) extra.metadata = { ...((extra.metadata as Record<string, unknown>) ?? {}), ...this.options.metadata };
    const inputs = plain(run.inputs);
    const interrupt = interruptOf(run.error);
    // A run stopped by a cancel did not fail: it ends without an error, tagged `cancelled`.
    const cancelled = run.error === CANCELLED;
    const tags = [
      ...(run.tags ?? []),
      ...(isRoot ? (this.options.tags ?? []) : []),
      ...(interrupt ? ['interrupt'] : []),
      ...(cancelled ? ['cancelled'] : []),
      ...(isRoot && isResume(inputs) ? ['resume'] : []),
    ];
    return {
      id: run.id,
      traceId: run.trace_id ?? run.id,
      parentRunId: run.parent_run_id ?? null,
      dottedOrder: run.dotted_order ?? run.id,
      name: isRoot && this.options.rootName ? this.options.rootName : run.name,
      runType: run.run_type,
      startTime: new Date(run.start_time),
      endTime: run.end_time === undefined ? undefined : new Date(run.end_time),
      inputs,
      outputs: interrupt ? { __interrupt__: interrupt } : run.outputs === undefined ? undefined : plain(run.outputs),
      error: interrupt || cancelled ? undefined : run.error,
      tags: [...new Set(tags)],
      extra,
      events: run.events ? (plain(run.events) as unknown[]) : undefined,
      projectName: this.options.projectName,
    };
  }
}

/** The interrupts of a run that ended by LangGraph's `interrupt()` (a GraphInterrupt), else undefined. */
function interruptOf(error: string | undefined): unknown {
  if (!error) return undefined;
  const at = error.indexOf('\n\nGraphInterrupt');
  if (at < 0 && !error.startsWith('GraphInterrupt')) return undefined;
  const message = at >= 0 ? error.slice(0, at) : error.replace(/^GraphInterrupt:?\s*/, '').split('\n    at ')[0]!;
  try {
    return JSON.parse(message);
  } catch {
    return message;
  }
}

/** Whether a root's input resumes a paused thread (a LangGraph `Command` with `resume`). */
function isResume(inputs: unknown): boolean {
  return inputs !== null && typeof inputs === 'object' && 'resume' in inputs && (inputs as { resume?: unknown }).resume !== undefined;
}

/**
 * A JSON-safe copy of a callback payload: LangChain messages become the plain dicts of the wire
 * (`type`, `content`, `tool_calls`, `usage_metadata`, …), never LangChain's constructor JSON.
 */
export function plain(value: unknown, seen = new WeakSet<object>(), depth = 0): unknown {
  if (value === null || value === undefined) return value ?? null;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (typeof value !== 'object') return value;
  if (value instanceof Date) return value.toISOString();
  if (seen.has(value) || depth > 48) return '[circular]';
  seen.add(value);
  try {
    if (BaseMessage.isInstance(value)) {
      const m = value as BaseMessage & Record<string, unknown>;
      const out: Record<string, unknown> = { type: m.getType(), content: plain(m.content, seen, depth + 1) };
      for (const key of ['id', 'name', 'tool_calls', 'invalid_tool_calls', 'tool_call_id', 'usage_metadata', 'response_metadata', 'additional_kwargs', 'status', 'artifact']) {
        const v = m[key];
        if (v !== undefined && !(typeof v === 'object' && v !== null && Object.keys(v).length === 0)) out[key] = plain(v, seen, depth + 1);
      }
      return out;
    }
    if (Array.isArray(value)) return value.map((v) => plain(v, seen, depth + 1) ?? null);
    const json = (value as { toJSON?: () => unknown }).toJSON;
    if (typeof json === 'function' && !isPlainObject(value)) return plain(json.call(value), seen, depth + 1);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const p = plain(v, seen, depth + 1);
      if (p !== undefined) out[k] = p;
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
