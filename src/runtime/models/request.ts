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
