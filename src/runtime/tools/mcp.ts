// Tools from registered tool servers, loaded with @langchain/mcp-adapters (Streamable HTTP, falling
// back to SSE) with the server's stored headers on every call. A server that cannot be reached, or a
// call that fails or times out, becomes an error message the model reads: the run goes on.
import { type StructuredToolInterface, tool } from '@langchain/core/tools';
import { isGraphInterrupt } from '@langchain/langgraph';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { z } from 'zod';
import { scrubMessage } from '../../core/errors.js';
import { normalizeServerUrl, redactServerUrl, urlScrubber } from '../../core/mcp-servers/url.js';
import { Redactor } from '../../tracing/redact.js';
import type { OAuthToolAccess, RuntimeToolServer } from '../oauth-tools.js';

/** One `tools.tools[]` entry of an agent. */
export interface ToolRef {
  name: string;
  mcpServerUrl: string;
  mcpServerName?: string | undefined;
}

/** What Hangar knows of a registered tool server. */
export interface ToolServerCredentials {
  url: string;
  name: string;
  headers: { key: string; value: string }[];
  /** `oauth`: calls carry the run principal's bearer token of provider `oauthProviderId` (issue 7). */
  authType?: 'headers' | 'oauth' | undefined;
  oauthProviderId?: string | null | undefined;
}

/** A tool named in tools.json that could not be offered as asked. */
export interface DroppedTool {
  name: string;
  mcpServerUrl: string;
  reason: string;
}

/** The loaded tools and what to close when they are no longer used. */
export interface LoadedTools {
  /** The tool of each ref that could be offered (dropped refs are absent). */
  tools: Map<ToolRef, StructuredToolInterface>;
  dropped: DroppedTool[];
  close(): Promise<void>;
}

/** Limits of tool servers. */
export interface ToolLimits {
  connectTimeoutMs: number;
  callTimeoutMs: number;
}

/** Load `refs`, grouped by server; `findServer` looks up the registration of a normalised URL. */
export async function loadMcpTools(options: {
  refs: ToolRef[];
  findServer: (url: string) => Promise<ToolServerCredentials | undefined>;
  limits: ToolLimits;
  /** Bearer tokens and authorization pauses for OAuth-backed servers; without it they are unavailable. */
  oauth?: OAuthToolAccess | undefined;
}): Promise<LoadedTools> {
  const byServer = new Map<string, ToolRef[]>();
  for (const ref of options.refs) {
    const url = normalizeServerUrl(ref.mcpServerUrl);
    byServer.set(url, [...(byServer.get(url) ?? []), ref]);
  }
  const clients: MultiServerMCPClient[] = [];
  const dropped: DroppedTool[] = [];
  const loaded: { ref: ToolRef; tool: StructuredToolInterface }[] = [];
  // A URL may carry a credential in its query: messages name the server by its redacted form, and
  // what a server or the MCP client says (which may quote the URL) has the URL's secrets redacted.
  // So are the header values Hangar sends (a server refusing a key often quotes it): the model, the
  // run's state and stream (which viewers read) never see a tool server's credentials.
  const urls: string[] = [];
  const headerSecrets: string[] = [];
  await Promise.all(
    [...byServer].map(async ([url, refs]) => {
      const server = await options.findServer(url);
      const shown = redactServerUrl(url);
      const scrubUrl = urlScrubber([server?.url ?? url]);
      const own = credentialsOf(server?.headers ?? []);
      headerSecrets.push(...own);
      let headerRedactor = new Redactor(own);
      const hide = (text: string) => headerRedactor.string(scrubUrl(text));
      urls.push(server?.url ?? url);
      const reason = (error: unknown) => hide(error instanceof Error ? error.message : String(error));
      if (!server) {
        for (const ref of refs) loaded.push({ ref, tool: unavailableTool(ref, `no tool server is registered at ${shown} in this workspace`) });
        return;
      }
      let headers = Object.fromEntries(server.headers.map((h) => [h.key, h.value]));
      const oauthServer: RuntimeToolServer | undefined =
        server.authType === 'oauth' && server.oauthProviderId ? { ...server, oauthProviderId: server.oauthProviderId } : undefined;
      const oauth = oauthServer ? options.oauth : undefined;
      if (oauthServer) {
        if (!oauth) {
          for (const ref of refs) loaded.push({ ref, tool: unavailableTool(ref, `tool server ${shown} is OAuth-backed and this runtime has no OAuth access`) });
          return;
        }
        try {
          const listing = await oauth.listingHeaders(oauthServer);
          if (!listing) {
            // Nobody has authorized yet: offer tools that ask for authorization on their first call.
            for (const ref of refs) loaded.push({ ref, tool: oauth.deferred(ref, oauthServer) });
            return;
          }
          headers = listing;
          const token = credentialsOf(Object.entries(listing).map(([key, value]) => ({ key, value })));
          headerSecrets.push(...token);
          headerRedactor = new Redactor([...own, ...token]);
        } catch (error) {
          const why = `tool server ${shown} cannot be authorized: ${reason(error)}`;
          for (const ref of refs) loaded.push({ ref, tool: unavailableTool(ref, why) });
          return;
        }
      }
      const client = new MultiServerMCPClient({
        mcpServers: {
          server: {
            transport: 'http',
            url: server.url,
            headers,
            automaticSSEFallback: true,
            reconnect: { enabled: false },
            defaultToolTimeout: options.limits.callTimeoutMs,
          },
        },
        throwOnLoadError: true,
        onConnectionError: 'throw',
        prefixToolNameWithServerName: false,
        useStandardContentBlocks: false,
        // OAuth-backed servers: every call carries the run principal's fresh bearer token.
        ...(oauth && oauthServer ? { beforeToolCall: oauth.beforeToolCall(oauthServer) } : {}),
      });
      try {
        const offered = await withTimeout(client.getTools(), options.limits.connectTimeoutMs, `tool server ${shown} did not answer`);
        clients.push(client);
        const byName = new Map(offered.map((t) => [t.name, t]));
        for (const ref of refs) {
          const found = byName.get(ref.name);
          if (found) loaded.push({ ref, tool: oauth && oauthServer ? oauth.guard(found, oauthServer) : found });
          else dropped.push({ name: ref.name, mcpServerUrl: shown, reason: `tool server ${shown} does not offer a tool named "${ref.name}"` });
        }
      } catch (error) {
        await client.close().catch(() => {});
        const why = `tool server ${shown} is unreachable or failing: ${reason(error)}`;
        for (const ref of refs) loaded.push({ ref, tool: unavailableTool(ref, why) });
      }
    }),
  );
  const scrubUrls = urlScrubber(urls);
  const headerRedactor = new Redactor(headerSecrets);
  const hide = (text: string) => headerRedactor.string(scrubUrls(text));
  return {
    tools: new Map(nameUniquely(loaded).map(({ ref, name, tool: t }) => [ref, errorsAsResults(t, name, options.limits.callTimeoutMs, hide)])),
    dropped,
    close: async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
    },
  };
}

/** The credentials of headers: each value, and the part after an auth scheme (`Bearer <token>`). */
function credentialsOf(headers: { key: string; value: string }[]): string[] {
  return headers.flatMap((h) => {
    const scheme = /^[A-Za-z][A-Za-z0-9-]*\s+(\S.*)$/.exec(h.value.trim());
    return scheme ? [h.value, scheme[1]!] : [h.value];
  });
}

/** Plain MCP names, unless two servers offer the same name: then both get their server's name in front. */
function nameUniquely(loaded: { ref: ToolRef; tool: StructuredToolInterface }[]): { ref: ToolRef; name: string; tool: StructuredToolInterface }[] {
  // The same tool of the same server named twice (by the agent and a subagent, say) is no collision.
  const servers = new Map<string, Set<string>>();
  for (const { ref } of loaded) servers.set(ref.name, (servers.get(ref.name) ?? new Set()).add(ref.mcpServerUrl.replace(/\/+$/, '')));
  return loaded.map(({ ref, tool: t }) => ({
    ref,
    name: (servers.get(ref.name)?.size ?? 0) > 1 ? prefixedName(ref) : ref.name,
    tool: t,
  }));
}

/**
 * Every name the tools of `refs` may have in an agent: plain, and with the server's name in front
 * (which one a tool gets depends on which servers answer, so both are possible).
 */
export function possibleToolNames(refs: ToolRef[]): string[] {
  return refs.flatMap((ref) => [ref.name, prefixedName(ref)]);
}

function prefixedName(ref: ToolRef): string {
  return `${slug(ref.mcpServerName ?? new URL(ref.mcpServerUrl).host)}__${ref.name}`;
}

function slug(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '') || 'server';
}

/** A tool whose every call answers that its server cannot be used, so the model can react. */
function unavailableTool(ref: ToolRef, why: string): StructuredToolInterface {
  return tool(
    async () => {
      throw new Error(why);
    },
    { name: ref.name, description: `(unavailable) ${why}`, schema: z.object({}).passthrough() },
  );
}

/**
 * The same tool under `name`, whose failures come back to the model as an error result. Hangar holds
 * its own deadline over every call (the MCP client's covers only the MCP request, not an OAuth token
 * refresh before it nor a transport that never settles): past `timeoutMs` the call is aborted.
 */
function errorsAsResults(inner: StructuredToolInterface, name: string, timeoutMs: number, hide: (text: string) => string): StructuredToolInterface {
  return tool(
    async (args: unknown, config) => {
      // Aborted by the deadline or by the run. Not `AbortSignal.any`: in Node 20 a composite signal
      // with listeners stays in memory until a source aborts, which a finished run's never does.
      const deadline = new AbortController();
      const parent = config?.signal;
      const onParentAbort = () => deadline.abort(parent?.reason);
      if (parent?.aborted) onParentAbort();
      else parent?.addEventListener('abort', onParentAbort, { once: true });
      try {
        return (await withTimeout(inner.invoke(args as never, { ...config, signal: deadline.signal }), timeoutMs, `tool ${name} did not answer`, () => deadline.abort())) as never;
      } catch (error) {
        // A pause for authorization (or approval) must reach LangGraph, not the model.
        if (isGraphInterrupt(error)) throw error;
        // The message only: a server's (or the client's) stack and file paths stay out of the thread,
        // and so do the credentials of tool server URLs (a server's error answer may quote its URL).
        return `Error: ${name} failed: ${hide(scrubMessage(error instanceof Error ? error.message : String(error)))}`;
      } finally {
        parent?.removeEventListener('abort', onParentAbort);
      }
    },
    { name, description: inner.description, schema: inner.schema as never },
  );
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string, onTimeout?: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        onTimeout?.();
        reject(new Error(`${message} within ${ms} ms`));
      }, ms);
    }),
  ]);
}
