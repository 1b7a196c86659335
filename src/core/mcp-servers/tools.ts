// The tools a registered tool server offers, read live with the MCP SDK's client (Streamable HTTP,
// then SSE) and the server's own credentials, so that a tools.json can be written without name
// mistakes. Nothing is cached: every listing asks the server (`force_refresh` has nothing to bypass).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { HangarError } from '../errors.js';

/** One tool as its server describes it. */
export interface ListedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** List the tools of the server at `url`, sending `headers` on every request. */
export async function listServerTools(url: string, headers: Record<string, string>, timeoutMs: number): Promise<ListedTool[]> {
  const attempt = async (transport: StreamableHTTPClientTransport | SSEClientTransport) => {
    const client = new Client({ name: 'hangar', version: '1' });
    try {
      await client.connect(transport, { timeout: timeoutMs });
      const tools: ListedTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { timeout: timeoutMs });
        for (const t of page.tools) tools.push({ name: t.name, description: t.description ?? '', inputSchema: t.inputSchema as Record<string, unknown> });
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    } finally {
      await client.close().catch(() => {});
    }
  };
  const target = new URL(url);
  try {
    return await attempt(new StreamableHTTPClientTransport(target, { requestInit: { headers } }));
  } catch (first) {
    try {
      return await attempt(new SSEClientTransport(target, { requestInit: { headers }, eventSourceInit: { fetch: (u, init) => fetch(u, { ...init, headers: { ...headers, ...(init?.headers as Record<string, string>) } }) } }));
    } catch {
      const reason = first instanceof Error ? first.message : String(first);
      throw new HangarError('mcp_server_unreachable', `could not list the tools of ${url}: ${reason}`);
    }
  }
}
