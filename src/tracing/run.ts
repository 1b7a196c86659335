// The run-tree model shared by every way a run enters the store (LangSmith ingestion, Hangar's own
// tracer) and by the exporters: one model of a run either way.

/** Kinds of runs, as LangSmith names them. Other strings are accepted and kept. */
export type RunType = 'chain' | 'llm' | 'tool' | 'retriever' | 'embedding' | 'prompt' | 'parser' | (string & {});

/** Token counts of a model call. */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/** A run as first reported: everything known when it starts (and possibly when it ends). */
export interface RunCreate {
  id: string;
  traceId: string;
  parentRunId: string | null;
  dottedOrder: string;
  name: string;
  runType: RunType;
  startTime: Date;
  endTime?: Date | undefined;
  inputs?: unknown;
  outputs?: unknown;
  error?: string | undefined;
  tags?: string[] | undefined;
  /** LangSmith's `extra`, with `metadata` inside. */
  extra?: Record<string, unknown> | undefined;
  events?: unknown[] | undefined;
  /** Project by name (created on first use) or id; neither means the workspace default. */
  projectName?: string | undefined;
  projectId?: string | undefined;
}

/** A later report on a run: its end, outputs or error. */
export interface RunUpdate {
  id: string;
  traceId: string;
  dottedOrder: string;
  parentRunId?: string | null | undefined;
  endTime?: Date | undefined;
  inputs?: unknown;
  outputs?: unknown;
  error?: string | undefined;
  tags?: string[] | undefined;
  extra?: Record<string, unknown> | undefined;
  events?: unknown[] | undefined;
}

/** A batch of run reports, as the SDK sends them. */
export interface RunBatch {
  post: RunCreate[];
  patch: RunUpdate[];
}

/** A stored run. */
export interface TraceRun {
  id: string;
  projectId: string;
  traceId: string;
  parentRunId: string | null;
  dottedOrder: string;
  name: string;
  runType: RunType;
  status: 'pending' | 'success' | 'error';
  inputs: unknown;
  outputs: unknown;
  error: string | null;
  startTime: Date;
  endTime: Date | null;
  latencyMs: number | null;
  tokens: TokenUsage | null;
  tags: string[];
  extra: Record<string, unknown>;
  events: unknown[] | null;
}

/** A run with the runs beneath it. */
export interface TraceRunTree extends TraceRun {
  children: TraceRunTree[];
}

/** The dotted-order segment of a run: `<start time as %Y%m%dT%H%M%S%fZ><run id>`, as the SDK writes it. */
export function dottedOrderSegment(startTime: Date, runId: string, microsecond = 0): string {
  const iso = startTime.toISOString(); // 2026-01-02T03:04:05.678Z
  const stamp = iso.slice(0, 19).replace(/[-:]/g, '') + iso.slice(20, 23) + String(microsecond).padStart(3, '0');
  return `${stamp}Z${runId}`;
}
