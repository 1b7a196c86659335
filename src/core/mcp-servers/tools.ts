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
import { redactServerUrl } from './url.js';

/** One tool as its server describes it. */
export interface ListedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** The most pages of tools a listing follows, and the most tools it keeps: a server is not trusted to end its list. */
export const MAX_TOOL_PAGES = 100;
export const MAX_TOOLS = 1000;

/**
 * List the tools of the server at `url`, sending `headers` on every request, through `guard`. The
 * whole listing (both transports, every page) ends within `timeoutMs`: a server that never answers,
 * or opens an event stream and never sends on it, is a 502, not a request that never ends.
 */
export async function listServerTools(url: string, headers: Record<string, string>, timeoutMs: number, guard: EgressGuard): Promise<ListedTool[]> {
  let open: StreamableHTTPClientTransport | SSEClientTransport | undefined;
  let timedOut = false;
  /** Set once a transport has connected: a later failure is the server's answer, not a reason to try SSE. */
  let connected = false;
  const attempt = async (transport: StreamableHTTPClientTransport | SSEClientTransport) => {
    open = transport;
    const client = new Client({ name: 'hangar', version: '1' });
    try {
      await client.connect(transport, { timeout: timeoutMs });
      connected = true;
      const tools: ListedTool[] = [];
      let cursor: string | undefined;
      for (let page = 0; ; page++) {
        if (page >= MAX_TOOL_PAGES) throw new ListingTooLong(`the server kept offering pages of tools (Hangar follows at most ${MAX_TOOL_PAGES})`);
        const listed = await client.listTools(cursor ? { cursor } : {}, { timeout: timeoutMs });
        for (const t of listed.tools) tools.push({ name: t.name, description: t.description ?? '', inputSchema: t.inputSchema as Record<string, unknown> });
        if (tools.length > MAX_TOOLS) throw new ListingTooLong(`the server offers more than ${MAX_TOOLS} tools (Hangar lists at most ${MAX_TOOLS})`);
        cursor = listed.nextCursor;
        if (!cursor) return tools;
      }
    } finally {
      await client.close().catch(() => {});
    }
  };
  const target = new URL(url);
  // guard.fetch for the transports' own requests; the scope for anything that falls back to the global fetch.
  const listing = guard.scope(async () => {
    try {
      return await attempt(new StreamableHTTPClientTransport(target, { requestInit: { headers }, fetch: guard.fetch }));
    } catch (first) {
      // A refused destination is refused for SSE too, and a server that connected and then failed
      // is not an SSE server: only a failed connection is tried again over SSE.
      if (refusal(first) || connected || timedOut) throw unreachable(url, first);
      try {
        return await attempt(new SSEClientTransport(target, { requestInit: { headers }, fetch: guard.fetch }));
      } catch (second) {
        throw unreachable(url, second instanceof ListingTooLong ? second : first);
      }
    }
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      // Closing the transport aborts its requests and event stream; the listing then settles (or is dropped).
      void open?.close().catch(() => {});
      reject(new HangarError('mcp_server_unreachable', `could not list the tools of ${redactServerUrl(url)}: the server did not finish answering within ${Math.round(timeoutMs / 1000)} s`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([listing, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** A server whose tool list does not end (or is too long to be a tool list). */
class ListingTooLong extends Error {}

/** The outbound guard's refusal somewhere in `error`'s causes, if that is what failed. */
export function refusal(error: unknown): EgressRefused | undefined {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof EgressRefused) return e;
  }
  return undefined;
}

/** What failed, in Hangar's words: the upstream's reply body never reaches the caller or the log. */
function reasonOf(error: unknown): string {
  const refused = refusal(error);
  if (refused) return `outbound request refused: ${refused.reason}`;
  if (error instanceof ListingTooLong) return error.message;
  if ((error instanceof StreamableHTTPError || error instanceof SseError) && typeof error.code === 'number' && error.code >= 100) {
    return `the server answered HTTP ${error.code}`;
  }
  if (error instanceof McpError) return `the server answered with MCP error ${error.code}`;
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code ?? (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) return `the connection failed (${code})`;
  return 'the server could not be reached or did not answer as an MCP server';
}

function unreachable(url: string, error: unknown): HangarError {
  return new HangarError('mcp_server_unreachable', `could not list the tools of ${redactServerUrl(url)}: ${reasonOf(error)}`);
}
