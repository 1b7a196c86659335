// The tools a registered tool server offers, read live with the MCP SDK's client (Streamable HTTP,
// then SSE) and the server's own credentials, so that a tools.json can be written without name
// mistakes. Nothing is cached: every listing asks the server (`force_refresh` has nothing to bypass).
// The listing is an outbound request to a user-supplied URL, so it goes through the outbound guard
// at connect time like agent runs do, and a failure says what failed, never what the server answered.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport, SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { EgressRefused, type EgressGuard } from '../../net/egress.js';
import { HangarError } from '../errors.js';

/** One tool as its server describes it. */
export interface ListedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** List the tools of the server at `url`, sending `headers` on every request, through `guard`. */
export async function listServerTools(url: string, headers: Record<string, string>, timeoutMs: number, guard: EgressGuard): Promise<ListedTool[]> {
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
  // guard.fetch for the transports' own requests; the scope for anything that falls back to the global fetch.
  return guard.scope(async () => {
    try {
      return await attempt(new StreamableHTTPClientTransport(target, { requestInit: { headers }, fetch: guard.fetch }));
    } catch (first) {
      // A refused destination is refused for SSE too: do not try again.
      if (refusal(first)) throw unreachable(url, first);
      try {
        return await attempt(new SSEClientTransport(target, { requestInit: { headers }, fetch: guard.fetch }));
      } catch {
        throw unreachable(url, first);
      }
    }
  });
}

function refusal(error: unknown): EgressRefused | undefined {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof EgressRefused) return e;
  }
  return undefined;
}

/** What failed, in Hangar's words: the upstream's reply body never reaches the caller or the log. */
function reasonOf(error: unknown): string {
  const refused = refusal(error);
  if (refused) return `outbound request refused: ${refused.reason}`;
  if ((error instanceof StreamableHTTPError || error instanceof SseError) && typeof error.code === 'number' && error.code >= 100) {
    return `the server answered HTTP ${error.code}`;
  }
  if (error instanceof McpError) return `the server answered with MCP error ${error.code}`;
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code ?? (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) return `the connection failed (${code})`;
  return 'the server could not be reached or did not answer as an MCP server';
}

function unreachable(url: string, error: unknown): HangarError {
  return new HangarError('mcp_server_unreachable', `could not list the tools of ${url}: ${reasonOf(error)}`);
}
