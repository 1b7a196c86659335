// The LangSmith wire form of run reports (snake_case JSON as the SDK sends it), to and from the
// run model. Used by the ingestion endpoints and by the LangSmith-compatible forwarder.
import { dottedOrderSegment, type RunCreate, type RunUpdate } from './run.js';

/** A run create or update as the SDK sends it (fields are optional at this level; checked by callers). */
export interface WireRun {
  id?: string;
  trace_id?: string;
  parent_run_id?: string | null;
  dotted_order?: string;
  name?: string;
  run_type?: string;
  start_time?: string | number;
  end_time?: string | number | null;
  inputs?: unknown;
  outputs?: unknown;
  error?: string | null;
  tags?: string[] | null;
  extra?: Record<string, unknown> | null;
  events?: unknown[] | null;
  session_name?: string | null;
  session_id?: string | null;
  [key: string]: unknown;
}

const MIN_TIME = -62135596800000; // 0001-01-01T00:00:00Z
const MAX_TIME = 253402300799999; // 9999-12-31T23:59:59.999Z
/** A time as the SDK sends it: epoch milliseconds or an ISO string (with or without zone; UTC assumed). */
export function parseWireTime(value: string | number | null | undefined): Date | undefined {
  if (value === null || value === undefined) return undefined;
  const date = typeof value === 'number' ? new Date(value) : new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`);
  // Years 1 to 9999 only: outside them PostgreSQL (or Date itself) cannot hold the time.
  const t = date.getTime();
  return Number.isNaN(t) || t < MIN_TIME || t > MAX_TIME ? undefined : date;
}

/**
 * A create from the wire; trace id and dotted order default to a root run's own. A child sent without
 * them (older clients give only `parent_run_id`) gets them empty: the store places it under its parent.
 */
export function createFromWire(run: WireRun & { id: string; name: string; run_type: string }, now = new Date()): RunCreate {
  const startTime = parseWireTime(run.start_time) ?? now;
  const child = typeof run.parent_run_id === 'string';
  return {
    id: run.id,
    traceId: run.trace_id ?? (child ? '' : run.id),
    parentRunId: run.parent_run_id ?? null,
    dottedOrder: run.dotted_order ?? (child ? '' : dottedOrderSegment(startTime, run.id)),
    name: run.name,
    runType: run.run_type,
    startTime,
    endTime: parseWireTime(run.end_time),
    inputs: run.inputs ?? undefined,
    outputs: run.outputs ?? undefined,
    error: run.error ?? undefined,
    tags: run.tags ?? undefined,
    extra: run.extra ?? undefined,
    events: run.events ?? undefined,
    projectName: run.session_name ?? undefined,
    projectId: run.session_id ?? undefined,
  };
}

/** An update from the wire. */
export function updateFromWire(run: WireRun & { id: string }): RunUpdate {
  return {
    id: run.id,
    traceId: run.trace_id ?? run.id,
    dottedOrder: run.dotted_order ?? '',
    parentRunId: run.parent_run_id,
    endTime: parseWireTime(run.end_time),
    inputs: run.inputs ?? undefined,
    outputs: run.outputs ?? undefined,
    error: run.error ?? undefined,
    tags: run.tags ?? undefined,
    extra: run.extra ?? undefined,
    events: run.events ?? undefined,
  };
}

/** A create in wire form, under the project `projectName`. */
export function createToWire(run: RunCreate, projectName: string | undefined): WireRun {
  return {
    id: run.id,
    trace_id: run.traceId,
    parent_run_id: run.parentRunId,
    dotted_order: run.dottedOrder,
    name: run.name,
    run_type: run.runType,
    start_time: run.startTime.toISOString(),
    ...(run.endTime ? { end_time: run.endTime.toISOString() } : {}),
    ...(run.inputs !== undefined ? { inputs: run.inputs } : {}),
    ...(run.outputs !== undefined ? { outputs: run.outputs } : {}),
    ...(run.error !== undefined ? { error: run.error } : {}),
    ...(run.tags ? { tags: run.tags } : {}),
    ...(run.extra ? { extra: run.extra } : {}),
    ...(run.events ? { events: run.events } : {}),
    ...(projectName ? { session_name: projectName } : {}),
  };
}

/** An update in wire form. */
export function updateToWire(run: RunUpdate): WireRun {
  return {
    id: run.id,
    trace_id: run.traceId,
    dotted_order: run.dottedOrder,
    ...(run.parentRunId !== undefined ? { parent_run_id: run.parentRunId } : {}),
    ...(run.endTime ? { end_time: run.endTime.toISOString() } : {}),
    ...(run.inputs !== undefined ? { inputs: run.inputs } : {}),
    ...(run.outputs !== undefined ? { outputs: run.outputs } : {}),
    ...(run.error !== undefined ? { error: run.error } : {}),
    ...(run.tags ? { tags: run.tags } : {}),
    ...(run.extra ? { extra: run.extra } : {}),
    ...(run.events ? { events: run.events } : {}),
  };
}
