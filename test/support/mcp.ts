// Real MCP tool servers for tests: one written here with @modelcontextprotocol/sdk that demands a
// bearer token, and the reference server @modelcontextprotocol/server-everything run as a process.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** A running tool server. */
export interface ToolServerFixture {
  url: string;
  /** Authorization headers of every request that reached the server (accepted or not). */
  seenAuthorization: (string | undefined)[];
  /** Tool calls the server executed. */
  calls: { name: string; args: unknown }[];
  close(): Promise<void>;
}

/**
 * A stateless Streamable HTTP MCP server on 127.0.0.1: each request gets a fresh server whose tools
 * `register` adds (recording calls in `calls`); `refuse`, when given, may answer a request first.
 */
async function startStatelessToolServer(
  name: string,
  register: (mcp: McpServer, calls: { name: string; args: unknown }[]) => void,
  refuse?: (req: IncomingMessage, res: import('node:http').ServerResponse) => boolean,
): Promise<ToolServerFixture> {
  const seenAuthorization: (string | undefined)[] = [];
  const calls: { name: string; args: unknown }[] = [];
  const http: Server = createServer(async (req, res) => {
    seenAuthorization.push(req.headers.authorization);
    if (refuse?.(req, res)) return;
    const mcp = new McpServer({ name, version: '1.0.0' });
    register(mcp, calls);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req as IncomingMessage, res, await readJson(req));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    seenAuthorization,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/**
 * A stateless Streamable HTTP MCP server with tools `add` and `whoami`; every request without
 * `Authorization: Bearer <token>` is refused with 401.
 */
export async function startBearerToolServer(token: string): Promise<ToolServerFixture> {
  return startStatelessToolServer(
    'bearer-test-server',
    (mcp, calls) => {
      mcp.registerTool('add', { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() } }, async (args) => {
        calls.push({ name: 'add', args });
        return { content: [{ type: 'text', text: String(args.a + args.b) }] };
      });
      mcp.registerTool('whoami', { description: 'Say who is calling', inputSchema: {} }, async () => {
        calls.push({ name: 'whoami', args: {} });
        return { content: [{ type: 'text', text: 'a caller with the right token' }] };
      });
    },
    (req, res) => {
      if (req.headers.authorization === `Bearer ${token}`) return false;
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'missing or wrong bearer token' }));
      return true;
    },
  );
}

/** The JSON body of a POST (undefined for other methods or an empty body). */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  if (req.method !== 'POST') return undefined;
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

/** A port that was free a moment ago (the reference server takes its port from PORT). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** The reference server `@modelcontextprotocol/server-everything` over Streamable HTTP, as a child process. */
export async function startEverythingServer(): Promise<{ url: string; close(): Promise<void> }> {
  const require = createRequire(import.meta.url);
  const entry = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [entry, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('listening on port')) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${code}: ${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A running stateful tool server (sessions, as most deployed MCP servers keep them). */
export interface SessionToolServerFixture {
  url: string;
  /** Tool calls the server executed. */
  calls: { name: string; args: unknown }[];
  /** `initialize` requests the server answered (one per session opened). */
  initializes: number;
  /** Requests refused with 404 because their `Mcp-Session-Id` was unknown. */
  unknownSessions: number;
  /** Forget every session, as a restarted server (or one whose sessions expired) does. */
  forgetSessions(): Promise<void>;
  /** Change `add`'s description, telling open sessions (`notifications/tools/list_changed`); not on every server. */
  describeAdd?(description: string): void;
  close(): Promise<void>;
}

/**
 * A Streamable HTTP MCP server that keeps sessions (`Mcp-Session-Id`) with tool `add`, on `port` (0:
 * any). A request naming a session it does not know gets 404, as the MCP specification asks; the
 * client must then open a new session.
 */
export async function startSessionToolServer(port = 0): Promise<SessionToolServerFixture> {
  const { randomUUID } = await import('node:crypto');
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; mcp: McpServer; add: { update(u: { description: string }): void } }>();
  let description = 'Add two numbers';
  const fixture = {
    url: '',
    calls: [] as { name: string; args: unknown }[],
    initializes: 0,
    unknownSessions: 0,
    async forgetSessions() {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map(async (s) => { await s.transport.close(); await s.mcp.close(); }));
    },
    describeAdd(text: string) {
      description = text;
      for (const s of sessions.values()) s.add.update({ description: text });
    },
    close: async () => {
      await fixture.forgetSessions();
      await new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      });
    },
  };
  const http: Server = createServer(async (req, res) => {
    const body = await readJson(req);
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const session = sessions.get(id);
      if (!session) {
        fixture.unknownSessions++;
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      await session.transport.handleRequest(req as IncomingMessage, res, body);
      return;
    }
    const mcp = new McpServer({ name: 'session-test-server', version: '1.0.0' });
    const add = mcp.registerTool('add', { description, inputSchema: { a: z.number(), b: z.number() } }, async (args) => {
      fixture.calls.push({ name: 'add', args });
      return { content: [{ type: 'text', text: String(args.a + args.b) }] };
    });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => {
        fixture.initializes++;
        sessions.set(sid, { transport, mcp, add });
      },
    });
    await mcp.connect(transport);
    await transport.handleRequest(req as IncomingMessage, res, body);
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  fixture.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  return fixture;
}

/**
 * A stateless Streamable HTTP MCP server offering a tool of each of `names` (MCP allows dots and up
 * to 128 characters); each answers `<name> <arguments as JSON>`. `calls` lists what ran.
 */
export async function startNamedToolServer(names: string[]): Promise<ToolServerFixture> {
  return startStatelessToolServer('named-tools', (mcp, calls) => {
    for (const name of names) {
      mcp.registerTool(name, { description: `The tool ${name}`, inputSchema: { a: z.number().optional(), b: z.number().optional() } }, async (args) => {
        calls.push({ name, args });
        return { content: [{ type: 'text', text: `${name} ${JSON.stringify(args)}` }] };
      });
    }
  });
}

/**
 * A stateless Streamable HTTP MCP server whose tools answer with the other kinds of MCP content:
 * `add` a text and a resource link, `read_note` an embedded text resource, `read_blob` an embedded
 * binary resource, `weather` structured content alone (its output schema declared), `weather_text`
 * structured content beside its text.
 */
export async function startResultKindsToolServer(): Promise<ToolServerFixture> {
  const weather = { temperature: 21, conditions: 'Sunny' };
  return startStatelessToolServer('result-kinds', (mcp, calls) => {
    mcp.registerTool('add', { description: 'Add two numbers; links the ledger', inputSchema: { a: z.number(), b: z.number() } }, async (args) => {
      calls.push({ name: 'add', args });
      return {
        content: [
          { type: 'text', text: `sum ${args.a + args.b}` },
          { type: 'resource_link', uri: 'ledger://sums/latest', name: 'ledger', mimeType: 'text/csv' },
        ],
      };
    });
    mcp.registerTool('read_note', { description: 'Read the note', inputSchema: {} }, async () => ({
      content: [{ type: 'resource', resource: { uri: 'notes://today', mimeType: 'text/markdown', text: '# Today\nShip the fix.' } }],
    }));
    mcp.registerTool('read_blob', { description: 'Read the blob', inputSchema: {} }, async () => ({
      content: [{ type: 'resource', resource: { uri: 'files://logo.png', mimeType: 'image/png', blob: Buffer.from('0123456789').toString('base64') } }],
    }));
    const outputSchema = { temperature: z.number(), conditions: z.string() };
    mcp.registerTool('weather', { description: 'Weather, structured only', inputSchema: {}, outputSchema }, async () => ({ content: [], structuredContent: weather }));
    mcp.registerTool('weather_text', { description: 'Weather, structured and as text', inputSchema: {}, outputSchema }, async () => ({
      content: [{ type: 'text', text: 'It is sunny, 21 degrees.' }],
      structuredContent: weather,
    }));
  });
}

/**
 * A server on the older HTTP+SSE transport of MCP (GET `/sse` opens a session's event stream, the
 * client POSTs to `/messages?sessionId=…`) with tool `add`. A message to a session it does not know
 * gets 400, as the MCP SDK's own examples answer.
 */
export async function startSseToolServer(): Promise<SessionToolServerFixture> {
  const { SSEServerTransport } = await import('@modelcontextprotocol/sdk/server/sse.js');
  const sessions = new Map<string, { transport: InstanceType<typeof SSEServerTransport>; mcp: McpServer }>();
  const fixture: SessionToolServerFixture = {
    url: '',
    calls: [],
    initializes: 0,
    unknownSessions: 0,
    async forgetSessions() {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map((s) => s.mcp.close()));
    },
    close: async () => {
      await fixture.forgetSessions();
      await new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      });
    },
  };
  const http: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res);
      const mcp = new McpServer({ name: 'sse-test-server', version: '1.0.0' });
      mcp.registerTool('add', { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() } }, async (args) => {
        fixture.calls.push({ name: 'add', args });
        return { content: [{ type: 'text', text: String(args.a + args.b) }] };
      });
      sessions.set(transport.sessionId, { transport, mcp });
      fixture.initializes++;
      await mcp.connect(transport);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/messages') {
      const session = sessions.get(url.searchParams.get('sessionId') ?? '');
      if (!session) {
        fixture.unknownSessions++;
        res.writeHead(400, { 'content-type': 'text/plain' }).end('No transport found for sessionId');
        return;
      }
      await session.transport.handlePostMessage(req, res);
      return;
    }
    res.writeHead(405).end();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  fixture.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/sse`;
  return fixture;
}
