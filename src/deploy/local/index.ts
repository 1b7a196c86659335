// The local driver (embedded default): builds a revision from its source in the data directory and
// runs it on the official LangGraph JS server (@langchain/langgraph-api) as a supervised process.
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, lstat, mkdir, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { Logger } from '../../logging.js';
import type { AppTraceEnv, AppTracing } from '../app-tracing.js';
import { DriverFailure, NothingServes, type BuildResult, type DeployResult, type Driver, type DriverContext, type DriverTarget, type LogStream } from '../driver.js';
import { runShell, type CommandOptions } from './commands.js';
import { detectConfinement, seccompFor, type Confinement, type Wrap } from './confine.js';
import { Front } from './front.js';
import { readAppConfig } from './app-config.js';
import { fetchSource, type FetchDeps } from './fetch.js';
import { AppProcess } from './supervisor.js';

/** Settings of the local driver. */
export interface LocalDriverOptions extends FetchDeps {
  /** Where revisions are built: `<dir>/<deployment id>/<revision id>/`. */
  dir: string;
  buildTimeoutMs: number;
  healthTimeoutMs: number;
  logger: Logger;
  /** Where the application's traces go (the deployment's tracing project); none when absent. */
  tracing?: AppTracing | undefined;
  /** Hangar's data directory (holding `dir`): hidden from builds and applications (src/deploy/local/confine.ts). */
  dataDir: string;
  /** When Hangar runs as root: the user (and group) builds and applications run as (`HANGAR_SANDBOX_UID_BASE` + DEPLOYMENT_UID_OFFSET). */
  uid: number;
  /** Whether confined commands run under the sandboxes' seccomp filter (`HANGAR_DEPLOY_SECCOMP`); on unless false. */
  seccomp?: boolean | undefined;
}

/**
 * As root, every deployment's builds and applications run as user `HANGAR_SANDBOX_UID_BASE` + this,
 * above the sandboxes' users. One user for all: each confined command sees only its own
 * deployment's directories (the rest of the data directory is hidden from it, including the other
 * deployments' install and npm caches); what the user is for is not being root on the host.
 */
export const DEPLOYMENT_UID_OFFSET = 65_536;

const execFileAsync = promisify(execFile);

// Resolution from Hangar's own package (createRequire: import.meta.resolve is not everywhere, e.g. vitest).
const hangarRequire = createRequire(import.meta.url);
const LANGGRAPH_API_PACKAGE = hangarRequire.resolve('@langchain/langgraph-api/package.json');

/** The LangGraph API server version the local driver runs applications on. */
export const LANGGRAPH_API_VERSION: string = (JSON.parse(await readFile(LANGGRAPH_API_PACKAGE, 'utf8')) as { version: string }).version;

// Hangar's own node_modules: applications without their own get the LangGraph packages from here.
const HANGAR_NODE_MODULES = path.resolve(LANGGRAPH_API_PACKAGE, '../../..');
// The LangGraph API server's storage modules (imported by file URL: the package does not export them).
const LANGGRAPH_API_DIST = path.join(path.dirname(LANGGRAPH_API_PACKAGE), 'dist');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Builds and runs revisions on this host. */
export class LocalDriver implements Driver {
  readonly name = 'local' as const;
  readonly hostsProcesses = true;
  private readonly running = new Map<string, { deploymentId: string; app: AppProcess }>();
  private readonly traceEnvs = new Map<string, AppTraceEnv>();
  private readonly fronts = new Map<string, Promise<Front>>();

  private confinement: Promise<Confinement | undefined> | undefined;

  constructor(private readonly o: LocalDriverOptions) {}

  /** This host's confinement, detected once; none when bubblewrap cannot run here. */
  private confined(): Promise<Confinement | undefined> {
    this.confinement ??= (async () => {
      const found = await detectConfinement({
        hidden: [this.o.dataDir],
        uid: this.o.uid,
        logger: this.o.logger,
        // The program is read from a file in the data directory (hidden from the commands) by the
        // shell that starts bwrap, on the descriptor bwrap loads it from.
        seccomp: this.o.seccomp === false ? undefined : seccompFor(path.join(this.o.dataDir, 'deploy-seccomp.bpf'), this.o.logger),
        // Hangar's packages (applications load the LangGraph server from them) and Node, wherever installed.
        readable: [path.dirname(HANGAR_NODE_MODULES), path.dirname(path.dirname(process.execPath)), ...(this.o.localRepos?.allow ? this.o.localRepos.roots : [])],
      });
      if (!found) this.o.logger.warn('bubblewrap (bwrap) cannot run here: deployment builds and applications run unconfined and can read Hangar\'s data directory');
      return found;
    })();
    return this.confinement;
  }

  /** `wrap` for a command of the revision that may write `writable`; undefined when unconfined. */
  private async wrapFor(ctx: DriverContext, phase: 'build' | 'deploy', writable: string[], readable: string[] = []): Promise<Wrap | undefined> {
    const confinement = await this.confined();
    if (!confinement) {
      ctx.log(phase, '[hangar] bubblewrap is not available on this host: this revision runs unconfined (see docs/security.md)\n');
      return undefined;
    }
    // As root, commands run as the deployments' user: what they write becomes that user's (chown
    // -R never follows symbolic links; a command cannot hard-link a file of the host into its own
    // directories: they are other mounts).
    await this.own(...writable);
    return (file, args) => confinement.wrap(file, args, { writable, readable });
  }

  private readonly ownedShared = new Set<string>();

  /**
   * As root, builds and applications run as the deployments' user: the directories they write become
   * that user's, with what Hangar put there (an unpacked upload, a database from before). chown -R
   * never follows symbolic links, and a command cannot hard-link a host file into its directories
   * (they are other mounts to it). A deployment's caches are walked once per start: what builds add
   * to them is the user's already.
   */
  private async own(...dirs: string[]): Promise<void> {
    if (process.getuid?.() !== 0) return;
    for (const d of dirs) {
      const cache = path.basename(d) === '.cache' || path.basename(d) === '.npm';
      if (cache && this.ownedShared.has(d)) continue;
      await execFileAsync('chown', ['-R', '-h', `${this.o.uid}:${this.o.uid}`, '--', d]);
      if (cache) this.ownedShared.add(d);
    }
  }

  /**
   * The deployment's own caches: installed dependencies by lockfile (`.cache`) and npm's cache
   * (`.npm`). Never shared between deployments: a build can write them (its install scripts, its
   * build command), so what one deployment's build put there must not be what another one runs.
   */
  private caches(deploymentId: string): { install: string; npm: string } {
    return { install: path.join(this.o.dir, deploymentId, '.cache'), npm: path.join(this.o.dir, deploymentId, '.npm') };
  }

  private closed: Promise<void> | undefined;

  /**
   * The deployments' directory, closed to the host's other users (0700, also when an older version
   * left it open): it holds every deployment's source, installed dependencies and database (its
   * threads and checkpoints). Confined commands reach their own directories through bubblewrap's
   * mounts, not through it.
   */
  private closeDir(): Promise<void> {
    this.closed ??= (async () => {
      await mkdir(this.o.dir, { recursive: true, mode: 0o700 });
      await chmod(this.o.dir, 0o700);
    })().catch((error: unknown) => {
      this.closed = undefined;
      throw error;
    });
    return this.closed;
  }

  private revisionDir(deploymentId: string, revisionId: string): string {
    return path.join(this.o.dir, deploymentId, revisionId);
  }

  /** The deployment's database: the LangGraph server's storage files, shared by every revision. */
  private databaseDir(deploymentId: string): string {
    return path.join(this.o.dir, deploymentId, 'database');
  }

  async ensureDatabase(ctx: DriverContext): Promise<void> {
    await this.closeDir();
    const dir = this.databaseDir(ctx.deployment.id);
    if (existsSync(dir)) return;
    await mkdir(dir, { recursive: true });
    ctx.log('deploy', `[hangar] created the deployment's database (threads, runs, checkpoints, store)\n`);
  }

  private front(deploymentId: string): Promise<Front> {
    let f = this.fronts.get(deploymentId);
    if (!f) {
      f = Front.start();
      this.fronts.set(deploymentId, f);
      f.catch(() => this.fronts.delete(deploymentId));
    }
    return f;
  }

  async build(ctx: DriverContext): Promise<BuildResult> {
    await this.closeDir();
    const dir = this.revisionDir(ctx.deployment.id, ctx.revision.id);
    await mkdir(dir, { recursive: true });
    // npm's cache is the deployment's own (neither the host user's nor another deployment's).
    const { install: cache, npm: npmCache } = this.caches(ctx.deployment.id);
    const root = process.getuid?.() === 0;
    await Promise.all([mkdir(cache, { recursive: true }), mkdir(npmCache, { recursive: true })]);
    const cmd = {
      // As root, builds run as the deployments' user, whose home is the revision's directory (root's
      // is closed to it: git would stop there).
      env: { ...baseEnv(), npm_config_cache: npmCache, ...(root ? { HOME: dir } : {}) },
      deadline: Date.now() + this.o.buildTimeoutMs,
      signal: ctx.signal,
      output: () => ctx.stream('build'),
      // A build writes its revision's directory and its deployment's install and npm caches.
      wrap: await this.wrapFor(ctx, 'build', [dir, cache, npmCache]),
    };
    const src = path.join(dir, 'src');
    const commitSha = await fetchSource(ctx, src, this.o, cmd, (d) => this.own(d));
    await this.own(src);
    const config = await readAppConfig(src, ctx.revision.sourceRevisionConfig.agentgraph_config_path ?? 'langgraph.json');
    ctx.log('build', `[hangar] graphs: ${Object.keys(config.graphs).join(', ')}\n`);
    const pkg = await readPackageJson(config.root);
    const sc = ctx.deployment.sourceConfig;
    const o = { ...cmd, cwd: config.root, env: { ...cmd.env, ...config.env } };
    await this.install(ctx, config.root, pkg, sc.install_command ?? undefined, o);
    const build = sc.build_command ?? (pkg?.scripts?.build ? 'npm run build' : undefined);
    if (build) await runShell(build, o);
    if (!existsSync(path.join(config.root, 'node_modules'))) {
      ctx.log('build', '[hangar] no node_modules: the application uses the LangGraph packages of the runtime\n');
      await symlink(HANGAR_NODE_MODULES, path.join(config.root, 'node_modules'), 'dir');
    } else {
      // Packages the application does not install itself (e.g. @langchain/langgraph) resolve from the
      // runtime's: Node looks in the parent directories' node_modules after the application's own.
      await rm(path.join(dir, 'node_modules'), { force: true });
      await symlink(HANGAR_NODE_MODULES, path.join(dir, 'node_modules'), 'dir');
    }
    ctx.log('build', '[hangar] build done\n');
    return { commitSha };
  }

  /**
   * Install dependencies. The default `npm ci` of a lockfile goes through a content-addressed cache:
   * `<dir>/<deployment id>/.cache/node_modules/<sha256 of the lockfile and Node version>/node_modules`,
   * linked into the revision, so a revision whose lockfile did not change installs nothing. A custom
   * install_command always runs (it may do more than install).
   */
  private async install(ctx: DriverContext, root: string, pkg: PackageJson | undefined, custom: string | undefined, o: CommandOptions): Promise<void> {
    const install = custom ?? defaultInstall(root, pkg);
    if (!install) return;
    const lockfile = path.join(root, 'package-lock.json');
    if (custom || install !== 'npm ci') return void (await runShell(install, o));
    const lock = await readFile(lockfile);
    if (hasLinks(lock)) {
      // Linked (file: directory) packages point into this revision's source: nothing to share.
      ctx.log('build', '[hangar] package-lock.json links local directories: installing without the cache\n');
      return void (await runShell(install, o));
    }
    const key = createHash('sha256').update(lock).update(`\0${process.version}\0${process.platform}-${process.arch}`).digest('hex');
    const cached = path.join(this.caches(ctx.deployment.id).install, 'node_modules', key);
    const link = path.join(root, 'node_modules');
    if (existsSync(path.join(cached, 'node_modules'))) {
      ctx.log('build', `[hangar] package-lock.json unchanged (sha256 ${key.slice(0, 12)}): reusing its installed dependencies\n`);
    } else {
      await runShell(install, o);
      // Publish into the cache by rename (atomic); when another build published the same key first, keep theirs.
      const tmp = `${cached}.tmp-${randomUUID()}`;
      await mkdir(tmp, { recursive: true });
      await rename(link, path.join(tmp, 'node_modules'));
      try {
        await rename(tmp, cached);
        ctx.log('build', `[hangar] installed dependencies cached under sha256 ${key.slice(0, 12)} of package-lock.json\n`);
      } catch {
        await rm(tmp, { recursive: true, force: true });
      }
    }
    await rm(link, { recursive: true, force: true });
    await symlink(path.join(cached, 'node_modules'), link, 'dir');
  }

  async deploy(ctx: DriverContext): Promise<DeployResult> {
    await this.stop(ctx.deployment.id, ctx.revision.id);
    await this.closeDir();
    const dir = this.revisionDir(ctx.deployment.id, ctx.revision.id);
    const src = path.join(dir, 'src');
    if (!existsSync(src)) throw new DriverFailure('the build output is missing on this host; redeploy the revision to build it again');
    const config = await readAppConfig(src, ctx.revision.sourceRevisionConfig.agentgraph_config_path ?? 'langgraph.json');
    const port = await freePort();
    const entry = path.join(dir, 'hangar-entry.mjs');
    await writeFile(entry, entryScript());
    // The server keeps its storage in <cwd>/.langgraph_api: point it at the deployment's database.
    const storage = path.join(config.root, '.langgraph_api');
    if (await lstat(storage).catch(() => undefined)) {
      ctx.log('deploy', '[hangar] the source has its own .langgraph_api; the deployment database is used instead\n');
      await rm(storage, { recursive: true, force: true });
    }
    await mkdir(this.databaseDir(ctx.deployment.id), { recursive: true });
    await symlink(this.databaseDir(ctx.deployment.id), storage, 'dir');
    const front = await this.front(ctx.deployment.id);
    const needsTs = Object.values(config.graphs).some((g) => /\.(m|c)?tsx?(:|$)/.test(typeof g === 'string' ? g : g.path));
    const args = [...(needsTs ? ['--import', tsxLoader()] : []), entry];
    const options = { port, nWorkers: 2, host: '127.0.0.1', cwd: config.root, graphs: config.graphs, auth: config.auth, http: config.http };
    const traces = this.o.tracing ? await this.o.tracing.envFor(ctx) : undefined;
    if (traces) this.traceEnvs.set(ctx.revision.id, traces);
    const env = {
      ...baseEnv(),
      // As root the application runs as the deployments' user, whose home is its revision's directory.
      ...(process.getuid?.() === 0 ? { HOME: dir } : {}),
      ...config.env,
      ...Object.fromEntries(ctx.revision.secrets.map((s) => [s.name, s.value])),
      PORT: String(port),
      LANGGRAPH_API_URL: `http://127.0.0.1:${port}`,
      HANGAR_APP_OPTIONS: JSON.stringify(options),
      // A new revision reads the database but writes it only once it takes over (promote).
      HANGAR_STORAGE_ROLE: 'standby',
      // Traces go to the deployment's tracing project in Hangar; never to a SaaS by accident.
      ...(traces?.env ?? { LANGSMITH_TRACING: 'false' }),
    };
    ctx.log('deploy', `[hangar] starting revision ${ctx.revision.seq} on port ${port} (LangGraph API ${LANGGRAPH_API_VERSION})\n`);
    // The application writes its revision's directory and the deployment's database, nothing else;
    // it reads its installed dependencies from the deployment's install cache.
    const wrap = await this.wrapFor(ctx, 'deploy', [dir, this.databaseDir(ctx.deployment.id)], [this.caches(ctx.deployment.id).install]);
    const app = new AppProcess({ args, cwd: config.root, env, port, wrap, output: () => appOutput(ctx.stream('deploy')) });
    this.running.set(ctx.revision.id, { deploymentId: ctx.deployment.id, app });
    await app.startHealthy(this.o.healthTimeoutMs, ctx.signal);
    ctx.log('deploy', '[hangar] healthy: GET /ok answered 200\n');
    return { runtimeUrl: front.url, imageVersion: LANGGRAPH_API_VERSION };
  }

  async promote(ctx: DriverContext): Promise<void> {
    const entry = this.running.get(ctx.revision.id);
    if (!entry) throw new DriverFailure('the revision is not running on this host');
    const front = await this.front(ctx.deployment.id);
    // When the new revision fails to take over, the previous one (stopped by then: it flushed the
    // database) starts again, as the writer it was, once the new one is gone.
    const restore = async (stopped: AppProcess): Promise<AppProcess | undefined> => {
      await entry.app.stop();
      const back = stopped.again();
      for (const r of this.running.values()) if (r.app === stopped) r.app = back;
      ctx.log('deploy', `[hangar] revision ${ctx.revision.seq} could not take over; starting the previous revision again\n`);
      try {
        await back.startHealthy(this.o.healthTimeoutMs, new AbortController().signal);
        return back;
      } catch (error) {
        await back.stop();
        this.o.logger.error({ err: error, deployment_id: ctx.deployment.id }, 'the previous revision did not start again after a failed rollout; nothing serves the deployment on this host');
        return undefined;
      }
    };
    let restored: boolean | undefined;
    let previous: AppProcess | undefined;
    try {
      previous = await front.switchTo(entry.app, () => entry.app.activate(), async (stopped) => {
        const back = await restore(stopped);
        restored = back !== undefined;
        return back;
      });
    } catch (error) {
      if (restored !== false) throw error;
      ctx.log('deploy', '[hangar] the previous revision did not start again either: nothing serves the deployment (status UNKNOWN)\n');
      throw new NothingServes(`${error instanceof Error ? error.message : String(error)}; the previous revision did not start again either: nothing serves the deployment`, { cause: error });
    }
    for (const [id, r] of this.running) if (r.app === previous) await this.stop(ctx.deployment.id, id);
    ctx.log('deploy', `[hangar] serving: revision ${ctx.revision.seq} took over the deployment's database and its stable URL\n`);
  }

  async stop(_deploymentId: string, revisionId: string): Promise<void> {
    const entry = this.running.get(revisionId);
    this.running.delete(revisionId);
    if (entry) {
      const front = this.fronts.get(entry.deploymentId);
      if (front) (await front.catch(() => undefined))?.forget(entry.app);
      await entry.app.stop();
    }
    const traces = this.traceEnvs.get(revisionId);
    this.traceEnvs.delete(revisionId);
    await traces?.release().catch((error: unknown) => this.o.logger.warn({ err: error }, 'could not revoke the tracing key of a revision'));
  }

  async teardown(target: DriverTarget['deployment']): Promise<void> {
    await this.forget(target.id);
  }

  async localDeployments(): Promise<string[]> {
    // Called at each reconciler pass from the start on: an upgraded host closes its directory here.
    if (existsSync(this.o.dir)) await this.closeDir();
    const dirs = await readdir(this.o.dir).catch(() => [] as string[]);
    // Directories are named by deployment id (`.cache` and `.npm` here are the caches earlier versions shared).
    return [...new Set([...this.fronts.keys(), ...dirs.filter((d) => UUID.test(d))])];
  }

  async forget(deploymentId: string): Promise<void> {
    for (const [id, r] of this.running) if (r.deploymentId === deploymentId) await this.stop(deploymentId, id);
    const front = this.fronts.get(deploymentId);
    this.fronts.delete(deploymentId);
    if (front) await (await front.catch(() => undefined))?.close();
    await rm(path.join(this.o.dir, deploymentId), { recursive: true, force: true });
  }

  async close(): Promise<void> {
    // Each process flushes the deployment's database as it stops.
    await Promise.allSettled([...this.running.keys()].map((id) => this.stop('', id)));
    const fronts = [...this.fronts.values()];
    this.fronts.clear();
    await Promise.allSettled(fronts.map(async (f) => (await f).close()));
  }
}

interface PackageJson {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  scripts?: Record<string, string>;
}

async function readPackageJson(root: string): Promise<PackageJson | undefined> {
  try {
    return JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as PackageJson;
  } catch {
    return undefined;
  }
}

/** Whether a lockfile (v2/v3) has packages linked from directories (`"link": true`). */
function hasLinks(lock: Buffer): boolean {
  try {
    const packages = (JSON.parse(lock.toString('utf8')) as { packages?: Record<string, { link?: boolean }> }).packages ?? {};
    return Object.values(packages).some((p) => p.link === true);
  } catch {
    return true;
  }
}

/** `npm ci` with a lockfile, `npm install` without; nothing when there is nothing to install. */
function defaultInstall(root: string, pkg: PackageJson | undefined): string | undefined {
  const deps = Object.keys({ ...pkg?.dependencies, ...pkg?.devDependencies });
  if (deps.length === 0) return undefined;
  return existsSync(path.join(root, 'package-lock.json')) ? 'npm ci' : 'npm install';
}

/** The environment every build step and application starts from: nothing of Hangar's own secrets. */
function baseEnv(): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'npm_config_cache', 'npm_config_registry', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY'];
  // Logs are read in a browser or a terminal later, not live in a TTY: no colour codes.
  return { ...Object.fromEntries(keep.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]])), NO_COLOR: '1', FORCE_COLOR: '0', npm_config_color: 'false' };
}

/**
 * The application's output for the deploy log, without the LangGraph server's start-up warning that
 * its dependencies are "not up to date" at version 0.0.0: it cannot read package versions on this
 * Node (a JSON import without its attribute fails), so the warning is always wrong here.
 */
function appOutput(log: LogStream): LogStream {
  let dropping = false;
  return {
    write: (text) => {
      const kept = text.split('\n').filter((line) => {
        if (/dependencies are not up to date/i.test(line) && text.includes("'0.0.0'")) dropping = true;
        if (!dropping) return true;
        // The warning's object ends with the logger's closing mark (or a line without its frame).
        if (line.includes('┗') || !line.includes('┃')) dropping = line.includes('┏');
        return false;
      });
      if (kept.join('\n')) log.write(kept.join('\n'));
    },
    end: () => log.end(),
  };
}

/** Ask the OS for a free loopback port. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

function tsxLoader(): string {
  try {
    return pathToFileURL(path.join(path.dirname(hangarRequire.resolve('tsx/package.json')), 'dist/esm/index.mjs')).href;
  } catch {
    throw new DriverFailure('TypeScript graphs need the tsx loader, which is not installed with this Hangar; build the application to JavaScript');
  }
}

/**
 * The process entry: the LangGraph JS server's own startServer, with the options of this revision
 * and its storage (the deployment's database, linked in as `<cwd>/.langgraph_api`) made safe to share
 * between revisions: only the serving revision writes (a new one reads until it takes over, then
 * reloads what the previous one flushed on exit); writes are atomic (temporary file + rename) and
 * finished before the operation returns, so a crash loses nothing that was answered.
 */
function entryScript(): string {
  const url = (rel: string) => JSON.stringify(pathToFileURL(path.join(LANGGRAPH_API_DIST, rel)).href);
  return `// Written by Hangar: runs one revision on the LangGraph JS server.
import { AsyncLocalStorage } from 'node:async_hooks';
import { rename, writeFile } from 'node:fs/promises';
import { startServer } from ${url('server.mjs')};
import { FileSystemPersistence, serialize } from ${url('storage/persist.mjs')};
import { FileSystemOps, FileSystemRuns } from ${url('storage/ops.mjs')};
import { checkpointer } from ${url('storage/checkpoint.mjs')};
import { store } from ${url('storage/store.mjs')};

const options = JSON.parse(process.env.HANGAR_APP_OPTIONS);
delete process.env.HANGAR_APP_OPTIONS;
let writer = process.env.HANGAR_STORAGE_ROLE === 'writer';
const P = FileSystemPersistence.prototype;
// Group commit: one write at a time per file; callers arriving meanwhile share the next one.
P.persist = function () {
  clearTimeout(this.flushTimeout);
  if (!writer || this.data == null || this.filepath == null) return Promise.resolve();
  if (this.hangarWriting) {
    this.hangarNext ??= this.hangarWriting.then(() => { this.hangarNext = undefined; return this.persist(); });
    return this.hangarNext;
  }
  const tmp = this.filepath + '.' + process.pid + '.tmp';
  const text = serialize(this.data);
  this.hangarWriting = writeFile(tmp, text, 'utf-8').then(() => rename(tmp, this.filepath)).finally(() => { this.hangarWriting = undefined; });
  return this.hangarWriting;
};
P.schedulePersist = function () {
  this.persist().catch((e) => console.error('hangar: could not write the database', e));
};
// Generators (the run queue's next()) mark changes and then yield: the change is written before
// the value is handed on, so a run is 'running' on disk before it starts executing.
P.withGenerator = async function* (fn) {
  if (this.filepath == null || this.data == null) throw new Error(this.name + ' not initialized');
  let dirty = false;
  const schedulePersist = () => void (dirty = true);
  const gen = typeof fn === 'function' ? fn(this.data, { schedulePersist }) : fn;
  for await (const value of gen) {
    if (dirty) { dirty = false; await this.persist(); }
    yield value;
  }
  if (dirty) await this.persist();
};
// Reads (below) change nothing: they do not wait for a write.
const reading = new AsyncLocalStorage();
P.with = async function (fn) {
  if (this.filepath == null || this.data == null) throw new Error(this.name + ' not initialized');
  try { return await fn(this.data); } finally { if (!reading.getStore()) await this.persist(); }
};
// A run stream's join reads its run when no event came for 500 ms, and stops when it is gone or
// done, dropping events queued meanwhile. Waiting for a write there let a short run finish (and a
// stateless one be deleted) in between, so /runs/wait answered null.
const getRun = FileSystemRuns.prototype.get;
FileSystemRuns.prototype.get = function (...args) { return reading.run(true, () => getRun.apply(this, args)); };

// Only the writer runs the queue: a standby revision must not execute runs it read from the database.
const next = FileSystemRuns.prototype.next;
FileSystemRuns.prototype.next = async function* (...args) { if (writer) yield* next.apply(this, args); };

const opsConn = new FileSystemPersistence('.langgraphjs_ops.json', () => ({ runs: {}, threads: {}, assistants: {}, assistant_versions: [], retry_counter: {} }));
await opsConn.initialize(options.cwd);
// Runs left 'running' by a process that is gone (a crash, or a stop that did not wait for them)
// will never finish: they end as errors, so their threads take new runs.
function endOrphanedRuns() {
  for (const run of Object.values(opsConn.data.runs)) {
    if (run.status !== 'running') continue;
    run.status = 'error';
    run.updated_at = new Date();
    const thread = opsConn.data.threads[run.thread_id];
    if (thread?.status === 'busy') thread.status = 'error';
    console.error('hangar: run ' + run.run_id + ' was running in a process that is gone; it ended as an error');
  }
}
if (writer) endOrphanedRuns();
const { cleanup } = await startServer(options, { ops: new FileSystemOps(opsConn) });

// Take over the database: load what the previous revision flushed, keep this revision's graphs' assistants.
async function takeOver() {
  const mine = Object.entries(opsConn.data.assistants).filter(([, a]) => a.metadata?.created_by === 'system');
  const versions = opsConn.data.assistant_versions.filter((v) => mine.some(([id]) => id === v.assistant_id));
  await opsConn.initialize(options.cwd);
  await checkpointer.initialize(options.cwd);
  await store.initialize(options.cwd);
  for (const [id, a] of mine) {
    if (opsConn.data.assistants[id]) continue;
    opsConn.data.assistants[id] = a;
    opsConn.data.assistant_versions.push(...versions.filter((v) => v.assistant_id === id));
  }
  writer = true;
  endOrphanedRuns();
  await opsConn.persist();
}
process.on('message', (m) => {
  if (m?.type !== 'activate') return;
  takeOver().then(() => process.send({ type: 'activated' }), (e) => process.send({ type: 'activate-failed', error: String(e?.message ?? e) }));
});
const stop = async () => { try { await cleanup(); } finally { process.exit(0); } };
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
`;
}
