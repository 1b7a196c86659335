// Run events: one definition from which events are produced, stored, framed as SSE and parsed.

/** The stream modes a run request may ask for. */
export const STREAM_MODES = ['values', 'updates', 'messages-tuple', 'custom', 'tasks'] as const;

/** A stream mode of a run request. */
export type StreamMode = (typeof STREAM_MODES)[number];

/** An event a run emits, before it gets its sequence number. */
export type RunEvent =
  | { kind: 'metadata'; data: { run_id: string; attempt: number; status?: 'pending' | 'running'; queue_position?: number } }
  | { kind: 'values'; ns: string[]; data: Record<string, unknown> }
  | { kind: 'updates'; ns: string[]; data: Record<string, unknown> }
  | { kind: 'messages'; ns: string[]; data: [Record<string, unknown>, Record<string, unknown>] }
  /** What the graph's tools write as they work (a sandbox command's output as it comes). */
  | { kind: 'custom'; ns: string[]; data: unknown }
  /** LangGraph's `tasks` mode: each task as it starts (`{id, name, input, triggers}`) and its result (`{id, name, result, error, interrupts}`). */
  | { kind: 'tasks'; ns: string[]; data: unknown }
  | { kind: 'error'; data: { error: string; message: string; code?: string | undefined } };

/** An event as stored in the run's event log and sent on the wire. */
export interface StoredEvent {
  /** Per-run, increasing from 1: the SSE `id:`. */
  seq: number;
  /** The SSE `event:` name (`values`, `updates|tools:…`, …). */
  event: string;
  data: unknown;
  /** `data` as JSON, when already serialised (written once, framed for every subscriber as is). */
  json?: string | undefined;
}

/** The SSE event name of an event: `<mode>` or, for a subgraph, `<mode>|<ns>`. */
export function eventName(event: RunEvent): string {
  switch (event.kind) {
    case 'metadata':
    case 'error':
      return event.kind;
    case 'values':
    case 'updates':
    case 'messages':
    case 'custom':
    case 'tasks':
      return event.ns.length > 0 ? `${event.kind}|${event.ns.join('|')}` : event.kind;
    default: {
      const never: never = event;
      throw new Error(`unknown event ${JSON.stringify(never)}`);
    }
  }
}

/** The SSE frame of a stored event: `event:`, `data:`, `id:` lines and a blank line (DESIGN §4). */
export function frame(event: StoredEvent): string {
  return `event: ${event.event}\ndata: ${event.json ?? JSON.stringify(event.data)}\nid: ${event.seq}\n\n`;
}

/** The SSE comment sent while a stream is idle, so proxies and clients keep the connection. */
export const HEARTBEAT = ': heartbeat\n\n';
