// Client side of run streams: start a run (or join one) and read its server-sent events.
import type { components } from './schema.js';

/** One server-sent event. */
export interface SseEvent {
  event: string;
  data: unknown;
  /** The `id:` line (the event's sequence number in its run). */
  id: string | undefined;
}

/** An opened run stream: the HTTP response and, on success, its events. */
export interface RunStream {
  status: number;
  response: Response;
  /** `Content-Location` (the run's path) on success. */
  location: string | null;
  /** The run id, from `Content-Location`. */
  runId: string | null;
  /** The error body when the request was refused. */
  error: unknown;
  events: AsyncGenerator<SseEvent>;
  /** Heartbeat comments seen so far. */
  heartbeats(): number;
}

/** The body of `POST /threads/{thread_id}/runs/stream`. */
export type StreamRunBody = components['schemas']['StreamRunRequest'];

interface Connection {
  baseUrl: string;
  apiKey: string;
  fetch?: typeof fetch;
  signal?: AbortSignal;
}

/** Start a run on `threadId` and stream its events. */
export function streamRun(options: Connection & { threadId: string; body: StreamRunBody }): Promise<RunStream> {
  return open(options, `/v1/deepagents/threads/${options.threadId}/runs/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(options.body),
  });
}

/** Join a run's stream, replaying what came after `lastEventId`. */
export function joinRun(options: Connection & { threadId: string; runId: string; lastEventId?: string }): Promise<RunStream> {
  return open(options, `/v1/deepagents/threads/${options.threadId}/runs/${options.runId}/stream`, {
    method: 'GET',
    headers: options.lastEventId ? { 'last-event-id': options.lastEventId } : {},
  });
}

async function open(conn: Connection, path: string, init: { method: string; headers: Record<string, string>; body?: string }): Promise<RunStream> {
  const response = await (conn.fetch ?? fetch)(`${conn.baseUrl.replace(/\/+$/, '')}${path}`, {
    ...init,
    headers: { accept: 'text/event-stream', 'x-api-key': conn.apiKey, ...init.headers },
    ...(conn.signal ? { signal: conn.signal } : {}),
  });
  const location = response.headers.get('content-location');
  let heartbeats = 0;
  if (!response.ok || !response.body) {
    const text = await response.text();
    let error: unknown = text;
    try {
      error = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, response, location, runId: null, error, events: (async function* () {})(), heartbeats: () => 0 };
  }
  return {
    status: response.status,
    response,
    location,
    runId: location?.split('/').pop() ?? null,
    error: undefined,
    events: parseSse(response.body, () => heartbeats++),
    heartbeats: () => heartbeats,
  };
}

/** Parse a `text/event-stream` body into events; comment lines call `onComment`. */
export async function* parseSse(body: ReadableStream<Uint8Array>, onComment: (text: string) => void = () => {}): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event = 'message';
  let data: string[] = [];
  let id: string | undefined;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      if (line === '') {
        if (data.length > 0) yield { event, data: JSON.parse(data.join('\n')), id };
        event = 'message';
        data = [];
        id = undefined;
      } else if (line.startsWith(':')) {
        onComment(line.slice(1).trim());
      } else {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
        else if (field === 'id') id = value;
      }
    }
  }
}

/** Read every event of a stream. */
export async function collect(stream: RunStream): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const e of stream.events) out.push(e);
  return out;
}
