// Whether a tool server answers as an MCP server with the credentials Hangar would send: one MCP
// `initialize` (Streamable HTTP, then SSE), bounded in time, its failure put in one of the hosted
// contract's three words. Like tool listings, the probe goes through the outbound guard and never
// repeats what the server answered.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport, SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { EgressGuard } from '../../net/egress.js';
import { refusal } from './tools.js';

/** Why a probe failed, as the hosted health check names it. */
export type ProbeErrorCode = 'auth_failed' | 'unreachable' | 'invalid_response';

/** What a probe found. */
export type ProbeResult = { ok: true } | { ok: false; errorCode: ProbeErrorCode; error: string };

/** Probe the MCP server at `url` with `headers`; never throws, and ends within about `timeoutMs`. */
export async function probeServer(url: string, headers: Record<string, string>, timeoutMs: number, guard: EgressGuard): Promise<ProbeResult> {
  const transports: (StreamableHTTPClientTransport | SSEClientTransport)[] = [];
  const attempt = async (transport: StreamableHTTPClientTransport | SSEClientTransport) => {
    transports.push(transport);
    const client = new Client({ name: 'hangar-health', version: '1' });
    try {
      await client.connect(transport, { timeout: timeoutMs });
    } finally {
      await client.close().catch(() => {});
    }
  };
  const target = new URL(url);
  const probe = guard.scope(async (): Promise<ProbeResult> => {
    try {
      await attempt(new StreamableHTTPClientTransport(target, { requestInit: { headers }, fetch: guard.fetch }));
      return { ok: true };
    } catch (first) {
      // A refused destination or refused credentials would fail over SSE too.
      const verdict = failure(first);
      if (verdict.errorCode === 'auth_failed' || refusal(first)) return verdict;
      try {
        await attempt(new SSEClientTransport(target, { requestInit: { headers }, fetch: guard.fetch }));
        return { ok: true };
      } catch (second) {
        // An SSE attempt that merely failed to connect says less than the first answer.
        const other = failure(second);
        return other.errorCode === 'auth_failed' ? other : verdict;
      }
    }
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<ProbeResult>((resolve) => {
    timer = setTimeout(() => {
      for (const t of transports) void t.close().catch(() => {});
      resolve({ ok: false, errorCode: 'unreachable', error: `the server did not answer within ${Math.round(timeoutMs / 1000)} s` });
    }, timeoutMs);
  });
  try {
    return await Promise.race([probe, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** A failed probe in Hangar's words: the upstream's reply body never reaches the caller. */
function failure(error: unknown): { ok: false; errorCode: ProbeErrorCode; error: string } {
  const refused = refusal(error);
  if (refused) return { ok: false, errorCode: 'unreachable', error: `outbound request refused: ${refused.reason}` };
  if (error instanceof UnauthorizedError) return { ok: false, errorCode: 'auth_failed', error: 'the server asks for authorization' };
  if ((error instanceof StreamableHTTPError || error instanceof SseError) && typeof error.code === 'number' && error.code >= 100) {
    if (error.code === 401 || error.code === 403) return { ok: false, errorCode: 'auth_failed', error: `the server refused the credentials (HTTP ${error.code})` };
    return { ok: false, errorCode: 'invalid_response', error: `the server answered HTTP ${error.code}` };
  }
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) return { ok: false, errorCode: 'unreachable', error: 'the server did not answer in time' };
  if (error instanceof McpError) return { ok: false, errorCode: 'invalid_response', error: `the server answered with MCP error ${error.code}` };
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code ?? (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) return { ok: false, errorCode: 'unreachable', error: `the connection failed (${code})` };
  // fetch's own network error without a code: a port fetch never opens (9, 25, …), a refused TLS handshake.
  if (error instanceof TypeError && error.message === 'fetch failed') {
    const cause = (error as { cause?: unknown }).cause;
    return { ok: false, errorCode: 'unreachable', error: `the connection failed${cause instanceof Error ? ` (${cause.message.slice(0, 200)})` : ''}` };
  }
  return { ok: false, errorCode: 'invalid_response', error: 'the server did not answer as an MCP server' };
}
