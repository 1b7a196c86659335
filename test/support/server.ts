// Boots a real Hangar server on port 0 against a fresh database, as a user would run it.
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createHangarClient, type HangarClient } from '../../src/client/index.js';
import { loadConfig } from '../../src/config/index.js';
import type { Role } from '../../src/core/caller.js';
import { startHangar, type Hangar } from '../../src/server.js';
import { freshDatabaseUrl } from './database.js';

/** A running server for one test file. */
export interface TestServer {
  hangar: Hangar;
  url: string;
  databaseUrl: string;
  dataDir: string;
  /** The bootstrap admin key of the default workspace. */
  adminKey: string;
  /** A client authenticated with the admin key. */
  client: HangarClient;
  /** A client with another key. */
  clientFor(apiKey: string): HangarClient;
  /** Create a key (as `hangar keys create` does) and return it. */
  createKey(options: { role: Role; workspace?: string; principal?: string }): Promise<string>;
  /** Create a workspace and an admin key in it. */
  createWorkspace(name: string, options?: { previewAccess?: boolean }): Promise<{ name: string; adminKey: string; client: HangarClient }>;
  /** Every log line written so far. */
  logs(): string;
  close(): Promise<void>;
}

/** Start a server; `env` adds settings as environment variables would. */
export async function startTestServer(
  options: { env?: Record<string, string>; databaseUrl?: string; dataDir?: string; adminKey?: string; port?: number } = {},
): Promise<TestServer> {
  // Reusing a database and data directory is how a test restarts Hangar or runs a second replica.
  const databaseUrl = options.databaseUrl ?? (await freshDatabaseUrl());
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'hangar-test-data-')));
  const adminKey = options.adminKey ?? `test_admin_${randomBytes(16).toString('hex')}`;
  const config = loadConfig({
    // A restart may take the port it had (an open page keeps its address); otherwise port 0.
    flags: { port: options.port ?? 0, databaseUrl, dataDir },
    env: { HANGAR_BOOTSTRAP_API_KEY: adminKey, LOG_LEVEL: 'debug', ...options.env },
  });
  const lines: string[] = [];
  const logDestination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const hangar = await startHangar(config, { logDestination, announce: (line) => lines.push(line) });
  const clientFor = (apiKey: string) => createHangarClient({ baseUrl: hangar.url, apiKey });
  const createKey: TestServer['createKey'] = async ({ role, workspace = 'default', principal }) =>
    (await hangar.services.workspaces.createKey({ workspace, role, ...(principal ? { principal } : {}) })).key;
  return {
    hangar,
    url: hangar.url,
    databaseUrl,
    dataDir,
    adminKey,
    client: clientFor(adminKey),
    clientFor,
    createKey,
    async createWorkspace(name, wsOptions = {}) {
      await hangar.services.workspaces.createWorkspace(name, wsOptions);
      const key = await createKey({ role: 'admin', workspace: name });
      return { name, adminKey: key, client: clientFor(key) };
    },
    logs: () => lines.join(''),
    close: () => hangar.close(),
  };
}
