// What Hangar sends to a model provider, beyond what LangChain builds. LangChain's agent loop names
// every AI message after its agent (and tool messages after their tool), and the OpenAI client sends
// that as the optional `name` of each chat-completions message. Strict OpenAI-compatible servers refuse
// fields they do not expect, and the name tells the model nothing, so it is taken out of the request
// body on its way out. This is done at the HTTP layer (the client's `fetch`) because model calls come
// from many places (the agent, every subagent, deepagents' general-purpose subagent and summarization)
// and only the body shows what is really sent.

type Fetch = typeof globalThis.fetch;

/** A `fetch` for the OpenAI client that drops `name` from chat-completions messages. */
export function openAiCompatibleFetch(inner: Fetch = globalThis.fetch): Fetch {
  return (input, init) => {
    if (!init || typeof init.body !== 'string' || !requestPath(input).endsWith('/chat/completions')) return inner(input, init);
    let body: { messages?: unknown } | undefined;
    try {
      body = JSON.parse(init.body) as { messages?: unknown };
    } catch {
      return inner(input, init);
    }
    if (!body || !Array.isArray(body.messages) || !body.messages.some((m) => m && typeof m === 'object' && 'name' in m)) return inner(input, init);
    body.messages = body.messages.map((m: unknown) => {
      if (!m || typeof m !== 'object' || !('name' in m)) return m;
      const { name: _name, ...rest } = m as Record<string, unknown>;
      return rest;
    });
    return inner(input, { ...init, body: JSON.stringify(body) });
  };
}

function requestPath(input: Parameters<Fetch>[0]): string {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  return url.split('?')[0]!;
}

/** Headers that carry a provider key (OpenAI and compatible servers, Anthropic, Azure OpenAI, Google). */
const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'api-key', 'x-goog-api-key'];

/**
 * A `fetch` for provider clients that takes the key a request carried out of the provider's error
 * answer. Gateways and OpenAI-compatible servers may repeat the key they refused or failed with
 * ("upstream failure with credential sk-…", an HTML error page quoting the header); the client
 * library turns that body into the error message, which becomes the run's error, its `error` event,
 * its trace and a log line. Redacting at the HTTP layer covers every one of those, whoever made the
 * call (agent, subagent, summarization) and wherever the key came from (a saved configuration or the
 * server's environment). Successful answers pass through untouched (streams stay streams).
 */
export function withoutEchoedCredentials(inner: Fetch = globalThis.fetch): Fetch {
  return async (input, init) => {
    const response = await inner(input, init);
    if (response.status < 400) return response;
    const secrets = credentialsOf(input, init);
    if (secrets.length === 0) return response;
    const text = await response.text();
    const scrubbed = secrets.reduce((t, s) => t.split(s).join('[redacted]'), text);
    const headers = new Headers(response.headers);
    // The body is read (and decoded) here: its length and encoding are no longer the original's.
    headers.delete('content-length');
    headers.delete('content-encoding');
    return new Response(scrubbed, { status: response.status, statusText: response.statusText, headers });
  };
}

function credentialsOf(input: Parameters<Fetch>[0], init: Parameters<Fetch>[1]): string[] {
  const sources = [new Headers(init?.headers), ...(input instanceof Request ? [input.headers] : [])];
  const out = new Set<string>();
  for (const headers of sources) {
    for (const name of CREDENTIAL_HEADERS) {
      const value = headers.get(name)?.trim();
      if (!value) continue;
      // `Bearer <key>`: the key alone is what a provider repeats; short values are not keys.
      const key = value.replace(/^(Bearer|Basic|Token)\s+/i, '');
      if (key.length >= 8) out.add(key);
    }
  }
  return [...out];
}

/** A provider's stream that ended (cleanly, as far as HTTP goes) before its API's end-of-answer event. */
export class IncompleteStreamError extends Error {
  override name = 'IncompleteStreamError';
}

/** What marks a complete streamed answer, per API: OpenAI's `[DONE]` or a finish reason, Anthropic's `message_stop`. */
const STREAM_ENDS = {
  openai: [/^data: *\[DONE\]/m, /"finish_reason" *: *"[^"]+"/],
  anthropic: [/^event: *message_stop/m, /"type" *: *"message_stop"/],
} as const;

/**
 * A `fetch` that fails a streamed answer whose body ends before the API's end-of-answer event. The
 * provider clients take a server-sent-event body that simply stops (a server or proxy closing the
 * response half-way, without an HTTP error) for a complete answer, and the run went on with half a
 * message, or half a tool call's arguments, as if the model had said just that.
 */
export function completeStreamsOnly(api: keyof typeof STREAM_ENDS, inner: Fetch = globalThis.fetch): Fetch {
  return async (input, init) => {
    const response = await inner(input, init);
    const type = response.headers.get('content-type') ?? '';
    if (!response.ok || !response.body || !type.includes('text/event-stream')) return response;
    const ends = STREAM_ENDS[api];
    const decoder = new TextDecoder();
    let tail = '';
    let complete = false;
    const checked = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          if (!complete) {
            // The last bytes of the previous chunk too: a marker may straddle two chunks.
            const text = tail + decoder.decode(chunk, { stream: true });
            complete = ends.some((end) => end.test(text));
            tail = text.slice(-256);
          }
          controller.enqueue(chunk);
        },
        flush(controller) {
          if (!complete) controller.error(new IncompleteStreamError("the model provider's stream ended before its answer was complete (no end-of-answer event)"));
        },
      }),
    );
    return new Response(checked, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
