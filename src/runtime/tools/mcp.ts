// Tools from registered tool servers, loaded with @langchain/mcp-adapters (Streamable HTTP, falling
// back to SSE) with the server's stored headers on every call. A server that cannot be reached, or a
// call that fails or times out, becomes an error message the model reads: the run goes on.
import { createHash } from 'node:crypto';
import type { RunnableConfig } from '@langchain/core/runnables';
import { ToolMessage } from '@langchain/core/messages';
import { DynamicStructuredTool, type StructuredToolInterface, tool } from '@langchain/core/tools';
import { isGraphInterrupt } from '@langchain/langgraph';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { scrubMessage } from '../../core/errors.js';
import { normalizeServerUrl, redactServerUrl, urlScrubber } from '../../core/mcp-servers/url.js';
import { Redactor } from '../../tracing/redact.js';
import type { OAuthToolAccess, RuntimeToolServer } from '../oauth-tools.js';
import { isOAuthBacked } from '../../core/oauth/service.js';

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
  /** `per_user_dynamic_client`: each principal's token comes from a client registered for it. */
  oauthMode?: 'legacy_shared_provider' | 'per_user_dynamic_client' | undefined;
  id?: string | undefined;
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
  /**
   * Whether a tool server was unreachable, failing or could not be authorized, or lacked a tool the
   * agent names, or has since said its tools changed (`notifications/tools/list_changed`): what was
   * loaded no longer reflects the servers, so it is not worth keeping for later runs (they load
   * again, and see the server once it is back, has the tool, or with its tools as they are now).
   */
  readonly degraded: boolean;
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
  const sessions: ServerSession[] = [];
  const dropped: DroppedTool[] = [];
  /** Whether a server could not be used: a later build may fare better (see LoadedTools.degraded). */
  let degraded = false;
  const loaded: { ref: ToolRef; tool: StructuredToolInterface }[] = [];
  // A URL may carry a credential in its query: messages name the server by its redacted form, and
  // what a server or the MCP client says (which may quote the URL) has the URL's secrets redacted.
  // So are the header values Hangar sends (a server refusing a key often quotes it): the model, the
  // run's state and stream (which viewers read) never see a tool server's credentials.
  const urls: string[] = [];
  const headerSecrets: string[] = [];
  // The bearer tokens of OAuth-backed servers' calls: each run principal's, known only at call time.
  const callSecrets = new Set<string>();
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
        isOAuthBacked({ ...server, oauthProviderId: server.oauthProviderId ?? null }) ? { ...server, oauthProviderId: server.oauthProviderId ?? null } : undefined;
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
          degraded = true;
          const why = `tool server ${shown} cannot be authorized: ${reason(error)}`;
          for (const ref of refs) loaded.push({ ref, tool: unavailableTool(ref, why) });
          return;
        }
      }
      const callHeaders = oauth && oauthServer ? oauth.beforeToolCall(oauthServer) : undefined;
      const session = new ServerSession(
        (callerHeaders) =>
          new MultiServerMCPClient({
            mcpServers: {
              server: {
                transport: 'http',
                url: server.url,
                headers: callerHeaders ?? headers,
                automaticSSEFallback: true,
                reconnect: { enabled: false },
                defaultToolTimeout: options.limits.callTimeoutMs,
              },
            },
            throwOnLoadError: true,
            onConnectionError: 'throw',
            prefixToolNameWithServerName: false,
            useStandardContentBlocks: false,
            // Embedded resources in the result, not beside it as an artifact the model never reads.
            outputHandling: 'content',
          }),
        options.limits.connectTimeoutMs,
        shown,
        // OAuth-backed servers: every call carries the run principal's fresh bearer token.
        callHeaders
          ? async (config) => {
              const { headers: sent } = await callHeaders({ serverName: 'server' }, undefined, config ?? {});
              for (const secret of credentialsOf(Object.entries(sent).map(([key, value]) => ({ key, value })))) callSecrets.add(secret);
              return sent;
            }
          : undefined,
      );
      try {
        const offered = await session.open();
        sessions.push(session);
        for (const ref of refs) {
          const found = offered.get(ref.name);
          if (!found) {
            dropped.push({ name: ref.name, mcpServerUrl: shown, reason: `tool server ${shown} does not offer a tool named "${ref.name}"` });
            continue;
          }
          const viaSession = session.tool(found);
          loaded.push({ ref, tool: oauth && oauthServer ? oauth.guard(viaSession, oauthServer) : viaSession });
        }
      } catch (error) {
        degraded = true;
        const why = `tool server ${shown} is unreachable or failing: ${reason(error)}`;
        for (const ref of refs) loaded.push({ ref, tool: unavailableTool(ref, why) });
      }
    }),
  );
  const scrubUrls = urlScrubber(urls);
  let headerRedactor = new Redactor(headerSecrets);
  let redacting = 0;
  const hide = (text: string) => {
    // A call's token joins the redacted values before its error is read (the headers come first).
    if (callSecrets.size !== redacting) {
      redacting = callSecrets.size;
      headerRedactor = new Redactor([...headerSecrets, ...callSecrets]);
    }
    return headerRedactor.string(scrubUrls(text));
  };
  return {
    tools: new Map(nameUniquely(loaded).map(({ ref, name, tool: t }) => [ref, errorsAsResults(t, name, options.limits.callTimeoutMs, hide)])),
    dropped,
    get degraded() {
      return degraded || dropped.length > 0 || sessions.some((s) => s.toolsChanged);
    },
    close: async () => {
      await Promise.all(sessions.map((s) => s.close()));
    },
  };
}

/** One generation of a server's MCP client: its tools, and whether the server has forgotten its session. */
interface Generation {
  client: MultiServerMCPClient;
  tools: Map<string, StructuredToolInterface>;
  expired: boolean;
  /** The server said its tools changed (names, descriptions or schemas) since they were listed. */
  toolsChanged: boolean;
}

/**
 * The MCP client of one tool server, kept across the runs of a built agent. A server that answers 404
 * to a request carrying its `Mcp-Session-Id` has forgotten the session (it restarted, or the session
 * expired): as the MCP specification asks, the client then opens a new session (a new `initialize`)
 * and sends the refused call again, once. The refused request was not executed, so nothing runs twice.
 * So for an SSE server refusing a message to its session's endpoint (forgotSession).
 */
class ServerSession {
  private current: Generation | undefined;
  private reopening: Promise<Generation> | undefined;
  private closed = false;

  constructor(
    /** A client sending the server's headers, or `callerHeaders` in their place. */
    private readonly connect: (callerHeaders?: Record<string, string>) => MultiServerMCPClient,
    private readonly connectTimeoutMs: number,
    private readonly shown: string,
    /** For an OAuth-backed server: the headers of the run's principal, for each call. */
    private readonly headersFor?: (config: RunnableConfig | undefined) => Promise<Record<string, string>>,
  ) {}

  /** Connect (again) and list the tools, within the connect deadline; the previous client is closed. */
  async open(): Promise<Map<string, StructuredToolInterface>> {
    return (await this.openGeneration()).tools;
  }

  /** `found` (a tool of this server) called through the session's current client. */
  tool(found: StructuredToolInterface): StructuredToolInterface {
    return new DynamicStructuredTool({
      name: found.name,
      description: found.description,
      schema: found.schema as DynamicStructuredTool['schema'],
      // Invoked with plain arguments, the MCP tool returns content only.
      responseFormat: 'content',
      func: async (args, _runManager, config) => this.call(found.name, args, config),
    });
  }

  /** Whether the server said its tools changed since the current client listed them. */
  get toolsChanged(): boolean {
    return this.current?.toolsChanged ?? false;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.current?.client.close().catch(() => {});
  }

  private async call(name: string, args: unknown, config: RunnableConfig | undefined): Promise<unknown> {
    if (this.headersFor) return this.callAs(await this.headersFor(config), name, args, config);
    // Closed once the cache dropped the agent (its server changed, or a newer build replaced it):
    // a run still using it calls on a client of its own.
    if (this.closed) return this.callAs(undefined, name, args, config);
    const used = this.current!;
    try {
      return await used.tools.get(name)!.invoke(args as never, config);
    } catch (error) {
      if (!used.expired || this.closed) throw error;
      const next = await this.reopen(used);
      const again = next.tools.get(name);
      if (!again) throw new Error(`tool server ${this.shown} started a new session and no longer offers a tool named "${name}"`);
      return again.invoke(args as never, config);
    }
  }

  /**
   * A call with the principal's own headers (or the stored ones), on a client of its own closed after the call. (The MCP
   * adapter's per-call headers open a client per call that stays open, with its session and event
   * stream on the server, until the agent is dropped: one more for every call.)
   */
  private async callAs(headers: Record<string, string> | undefined, name: string, args: unknown, config: RunnableConfig | undefined): Promise<unknown> {
    const client = this.connect(headers);
    try {
      const offered = await withTimeout(client.getTools(), this.connectTimeoutMs, `tool server ${this.shown} did not answer`);
      const found = offered.find((t) => t.name === name);
      if (!found) throw new Error(`tool server ${this.shown} no longer offers a tool named "${name}"`);
      return await found.invoke(args as never, config);
    } finally {
      await client.close().catch(() => {});
    }
  }

  /** One new session for every call that found `stale` expired. */
  private reopen(stale: Generation): Promise<Generation> {
    if (this.current !== stale) return Promise.resolve(this.current!);
    this.reopening ??= this.openGeneration().finally(() => {
      this.reopening = undefined;
    });
    return this.reopening;
  }

  private async openGeneration(): Promise<Generation> {
    const client = this.connect();
    try {
      const offered = await withTimeout(client.getTools(), this.connectTimeoutMs, `tool server ${this.shown} did not answer`);
      const generation: Generation = { client, tools: new Map(offered.map((t) => [t.name, t])), expired: false, toolsChanged: false };
      const sdk = await client.getClient('server');
      if (sdk) {
        sdk.setNotificationHandler(ToolListChangedNotificationSchema, () => {
          generation.toolsChanged = true;
        });
        sdk.onerror = (error) => {
          if (forgotSession(error, sdk.transport)) generation.expired = true;
        };
      }
      if (this.closed) throw new Error(`the agent using tool server ${this.shown} is no longer in use`);
      const previous = this.current;
      this.current = generation;
      await previous?.client.close().catch(() => {});
      return generation;
    } catch (error) {
      await client.close().catch(() => {});
      throw error;
    }
  }
}

/**
 * Whether `error` is the server refusing a message of a session it does not know (so the message
 * was not run): over Streamable HTTP a 404 to a request carrying the session id, as the MCP
 * specification says; over the older SSE transport a 404 or 400 to a message POSTed to the
 * session's endpoint (a server that restarted lost its sessions; the SDK's examples answer 400).
 */
function forgotSession(error: Error, transport: unknown): boolean {
  if (error instanceof StreamableHTTPError) return error.code === 404 && Boolean((transport as { sessionId?: string } | undefined)?.sessionId);
  return transport instanceof SSEClientTransport && /^Error POSTing to endpoint \(HTTP 40[04]\)/.test(error.message);
}

/** The credentials of headers: each value, and the part after an auth scheme (`Bearer <token>`). */
function credentialsOf(headers: { key: string; value: string }[]): string[] {
  return headers.flatMap((h) => {
    const scheme = /^[A-Za-z][A-Za-z0-9-]*\s+(\S.*)$/.exec(h.value.trim());
    return scheme ? [h.value, scheme[1]!] : [h.value];
  });
}

/**
 * The name each tool has in the agent: its MCP name, or with its server's name in front when two
 * servers offer the same name, made one a model provider takes (modelToolName). Tools whose names
 * still meet (`a.b` made `a_b` beside a tool `a_b`, or two servers of the same display name) get a
 * suffix (a hash of their server and tool), except one offered under its own MCP name: no name is
 * offered twice.
 */
function nameUniquely(loaded: { ref: ToolRef; tool: StructuredToolInterface }[]): { ref: ToolRef; name: string; tool: StructuredToolInterface }[] {
  // The same tool of the same server named twice (by the agent and a subagent, say) is no collision.
  const servers = new Map<string, Set<string>>();
  for (const { ref } of loaded) servers.set(ref.name, (servers.get(ref.name) ?? new Set()).add(identity(ref)));
  const named = loaded.map(({ ref, tool: t }) => ({ ref, name: modelToolName((servers.get(ref.name)?.size ?? 0) > 1 ? prefixedName(ref) : ref.name), tool: t }));
  const owners = new Map<string, Set<string>>();
  for (const { ref, name } of named) owners.set(name, (owners.get(name) ?? new Set()).add(identity(ref)));
  // Of tools that meet, one offered under its own MCP name keeps it (`a_b` beside `a.b`).
  const keeps = (ref: ToolRef, name: string) => ref.name === name && named.filter((n) => n.name === name && n.ref.name === name && identity(n.ref) !== identity(ref)).length === 0;
  return named.map((n) => ((owners.get(n.name)?.size ?? 0) > 1 && !keeps(n.ref, n.name) ? { ...n, name: withSuffix(n.name, identity(n.ref)) } : n));
}

/**
 * Every name the tools of `refs` may have in an agent: plain, and with the server's name in front
 * (which one a tool gets depends on which servers answer, so both are possible), each as a model
 * provider takes it, with and without the suffix that parts two names that meet.
 */
export function possibleToolNames(refs: ToolRef[]): string[] {
  return refs.flatMap((ref) =>
    [ref.name, prefixedName(ref)].flatMap((name) => {
      const safe = modelToolName(name);
      return [safe, withSuffix(safe, identity(ref))];
    }),
  );
}

/** What OpenAI, Anthropic and most providers accept as a tool name; MCP allows more (dots, 128 characters). */
const MODEL_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_MODEL_TOOL_NAME = 64;

/**
 * `name` as a model provider takes it: unchanged when it already is one, else each character
 * outside letters, digits, `_` and `-` made `_`, and a name still too long cut, with a short hash of
 * the whole name so that two long names with the same beginning stay apart. The call still reaches
 * the server under the tool's own MCP name.
 */
export function modelToolName(name: string): string {
  if (MODEL_TOOL_NAME.test(name)) return name;
  const safe = name.replace(/[^A-Za-z0-9_-]/g, '_') || 'tool';
  return safe.length <= MAX_MODEL_TOOL_NAME ? safe : withSuffix(safe, name);
}

/** `name` cut to leave room for `_` and 8 hex digits of a hash of `seed`, then those. */
function withSuffix(name: string, seed: string): string {
  const hash = createHash('sha256').update(seed).digest('hex').slice(0, 8);
  return `${name.slice(0, MAX_MODEL_TOOL_NAME - 9)}_${hash}`;
}

/** Which tool of which server a ref is. */
function identity(ref: ToolRef): string {
  return `${ref.mcpServerUrl.replace(/\/+$/, '')} ${ref.name}`;
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
        const result: unknown = await withTimeout(inner.invoke(args as never, { ...config, signal: deadline.signal }), timeoutMs, `tool ${name} did not answer`, () => deadline.abort());
        if (ToolMessage.isInstance(result)) {
          result.content = modelContent(result.content, result.artifact) as never;
          return result as never;
        }
        return modelContent(result) as never;
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

/** A content block of a tool result as @langchain/mcp-adapters makes it from MCP content. */
interface ResultBlock {
  type?: string;
  text?: string;
  structuredContent?: unknown;
  source_type?: string;
  mime_type?: string;
  url?: string;
  data?: string;
  metadata?: { uri?: string };
}

/**
 * A tool's result as every model provider takes it in a tool message: text, and images (which the
 * model adapters pass on, or describe, as their provider allows). Embedded resources become their
 * text (with their URI), resource links and binary data a line saying what they are: a provider's
 * adapter refuses a file block in a tool message (ChatOpenAI throws on a resource link's URL, which
 * fails the run and every later run of the thread), and an artifact never reaches the model. A
 * result of structured content alone is its JSON. All text: one string.
 */
export function modelContent(content: unknown, artifact?: unknown): unknown {
  if (typeof content === 'string') return textOfBlock(content) ?? content;
  const blocks = (Array.isArray(content) ? content : [content]) as ResultBlock[];
  const out = blocks.flatMap((block): ResultBlock[] => {
    if (typeof block !== 'object' || block === null) return [{ type: 'text', text: String(block) }];
    const uri = block.metadata?.uri ?? block.url;
    const what = [uri, block.mime_type].filter(Boolean).join(', ');
    switch (block.type) {
      case 'text':
        return [{ type: 'text', text: block.text ?? '' }];
      case 'image_url':
        return [block];
      case 'file':
        if (block.source_type === 'text') return [{ type: 'text', text: `Resource${what ? ` (${what})` : ''}:\n${block.text ?? ''}` }];
        if (block.source_type === 'url') return [{ type: 'text', text: `Resource link: ${what}` }];
        return [{ type: 'text', text: `Resource${what ? ` (${what})` : ''}: ${binarySize(block.data)} of binary data, not shown` }];
      case 'audio':
        return [{ type: 'text', text: `Audio${block.mime_type ? ` (${block.mime_type})` : ''}: ${binarySize(block.data)}, not shown` }];
      default:
        return [{ type: 'text', text: JSON.stringify(block) }];
    }
  });
  if (out.length === 0) {
    const structured = (Array.isArray(artifact) ? (artifact as { type?: string; data?: unknown }[]) : []).find((a) => a?.type === 'mcp_structured_content')?.data;
    return structured === undefined ? '' : JSON.stringify(structured);
  }
  if (out.every((b) => b.type === 'text')) return out.map((b) => b.text).join('\n\n');
  return out;
}

/**
 * A result of one text block with structured content (or `_meta`) beside it reaches the tool message
 * as that block's JSON (LangChain stringifies a lone block): its text is what the tool said.
 */
function textOfBlock(content: string): string | undefined {
  if (!content.startsWith('{"type":"text"')) return undefined;
  try {
    const block = JSON.parse(content) as ResultBlock & { meta?: unknown };
    const extra = Object.keys(block).filter((k) => !['type', 'text', 'structuredContent', 'meta'].includes(k));
    return block.type === 'text' && typeof block.text === 'string' && extra.length === 0 ? block.text : undefined;
  } catch {
    return undefined;
  }
}

function binarySize(base64: string | undefined): string {
  return `${Math.floor(((base64 ?? '').replace(/=+$/, '').length * 3) / 4)} bytes`;
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
