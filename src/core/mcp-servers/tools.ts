// The tools a registered tool server offers, listed on request (the Console's tool picker and its
// "Test connection"): one MCP session over Streamable HTTP, falling back to SSE, closed at once.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { HangarError } from '../errors.js';

/** One tool as the server describes it. */
export interface ListedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** List the tools of the server at `url`, sending `headers`; a failure is a 502 naming the server. */
export async function listServerTools(url: string, headers: Record<string, string>, timeoutMs = 10_000): Promise<ListedTool[]> {
  const signal = AbortSignal.timeout(timeoutMs);
  const attempt = async (transport: StreamableHTTPClientTransport | SSEClientTransport) => {
    const client = new Client({ name: 'hangar-console', version: '1' });
    try {
      await client.connect(transport, { signal, timeout: timeoutMs });
      const tools: ListedTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { signal, timeout: timeoutMs });
        for (const t of page.tools) tools.push({ name: t.name, description: t.description ?? '', inputSchema: t.inputSchema as Record<string, unknown> });
        cursor = page.nextCursor;
      } while (cursor && tools.length < 5_000);
      return tools;
    } finally {
      await client.close().catch(() => {});
    }
  };
  try {
    return await attempt(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  } catch (first) {
    if (signal.aborted) throw unreachable(url, first);
    try {
      return await attempt(new SSEClientTransport(new URL(url), { requestInit: { headers }, eventSourceInit: { fetch: (u, init) => fetch(u, { ...init, headers: { ...headers, ...Object.fromEntries(new Headers(init?.headers).entries()) } }) } }));
    } catch {
      throw unreachable(url, first);
    }
  }
}

function unreachable(url: string, error: unknown): HangarError {
  return new HangarError('mcp_server_unreachable', `tool server ${url} did not list its tools: ${error instanceof Error ? error.message : String(error)}`);
}
