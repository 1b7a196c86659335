// The local driver (embedded default): builds a revision from its source in the data directory and
// runs it on the official LangGraph JS server (@langchain/langgraph-api) as a supervised process.
import { existsSync } from 'node:fs';
import { readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { Logger } from '../../logging.js';
import type { AppTraceEnv, AppTracing } from '../app-tracing.js';
import { DriverFailure, type BuildResult, type DeployResult, type Driver, type DriverContext, type DriverTarget } from '../driver.js';
import { runShell } from './commands.js';
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
}

// Resolution from Hangar's own package (createRequire: import.meta.resolve is not everywhere, e.g. vitest).
const hangarRequire = createRequire(import.meta.url);
const LANGGRAPH_API_PACKAGE = hangarRequire.resolve('@langchain/langgraph-api/package.json');

/** The LangGraph API server version the local driver runs applications on. */
export const LANGGRAPH_API_VERSION: string = (JSON.parse(await readFile(LANGGRAPH_API_PACKAGE, 'utf8')) as { version: string }).version;

// Hangar's own node_modules: applications without their own get the LangGraph packages from here.
const HANGAR_NODE_MODULES = path.resolve(LANGGRAPH_API_PACKAGE, '../../..');

/** Builds and runs revisions on this host. */
export class LocalDriver implements Driver {
  readonly name = 'local' as const;
  readonly hostsProcesses = true;
  private readonly running = new Map<string, AppProcess>();
  private readonly traceEnvs = new Map<string, AppTraceEnv>();

  constructor(private readonly o: LocalDriverOptions) {}

  private revisionDir(deploymentId: string, revisionId: string): string {
    return path.join(this.o.dir, deploymentId, revisionId);
  }

  async build(ctx: DriverContext): Promise<BuildResult> {
    const dir = this.revisionDir(ctx.deployment.id, ctx.revision.id);
    const cmd = {
      env: baseEnv(),
      deadline: Date.now() + this.o.buildTimeoutMs,
      signal: ctx.signal,
      onOutput: (t: string) => ctx.log('build', t),
    };
    const src = path.join(dir, 'src');
    const commitSha = await fetchSource(ctx, src, this.o, cmd);
    const config = await readAppConfig(src, ctx.revision.sourceRevisionConfig.agentgraph_config_path ?? 'langgraph.json');
    ctx.log('build', `[hangar] graphs: ${Object.keys(config.graphs).join(', ')}\n`);
    const pkg = await readPackageJson(config.root);
    const sc = ctx.deployment.sourceConfig;
    const install = sc.install_command ?? defaultInstall(config.root, pkg);
    const o = { ...cmd, cwd: config.root, env: { ...cmd.env, ...config.env } };
    if (install) await runShell(install, o);
    const build = sc.build_command ?? (pkg?.scripts?.build ? 'npm run build' : undefined);
    if (build) await runShell(build, o);
    if (!existsSync(path.join(config.root, 'node_modules'))) {
      ctx.log('build', '[hangar] no node_modules: the application uses the LangGraph packages of the runtime\n');
      await symlink(HANGAR_NODE_MODULES, path.join(config.root, 'node_modules'), 'dir');
    }
    ctx.log('build', '[hangar] build done\n');
    return { commitSha };
  }

  async deploy(ctx: DriverContext): Promise<DeployResult> {
    await this.stop(ctx.deployment.id, ctx.revision.id);
    const dir = this.revisionDir(ctx.deployment.id, ctx.revision.id);
    const src = path.join(dir, 'src');
    if (!existsSync(src)) throw new DriverFailure('the build output is missing on this host; redeploy the revision to build it again');
    const config = await readAppConfig(src, ctx.revision.sourceRevisionConfig.agentgraph_config_path ?? 'langgraph.json');
    const port = await freePort();
    const entry = path.join(dir, 'hangar-entry.mjs');
    await writeFile(entry, entryScript());
    const needsTs = Object.values(config.graphs).some((g) => /\.(m|c)?tsx?(:|$)/.test(typeof g === 'string' ? g : g.path));
    const args = [...(needsTs ? ['--import', tsxLoader()] : []), entry];
    const options = { port, nWorkers: 2, host: '127.0.0.1', cwd: config.root, graphs: config.graphs, auth: config.auth, http: config.http };
    const traces = this.o.tracing ? await this.o.tracing.envFor(ctx) : undefined;
    if (traces) this.traceEnvs.set(ctx.revision.id, traces);
    const env = {
      ...baseEnv(),
      ...config.env,
      ...Object.fromEntries(ctx.revision.secrets.map((s) => [s.name, s.value])),
      PORT: String(port),
      LANGGRAPH_API_URL: `http://127.0.0.1:${port}`,
      HANGAR_APP_OPTIONS: JSON.stringify(options),
      // Traces go to the deployment's tracing project in Hangar; never to a SaaS by accident.
      ...(traces?.env ?? { LANGSMITH_TRACING: 'false' }),
    };
    ctx.log('deploy', `[hangar] starting revision ${ctx.revision.seq} on port ${port} (LangGraph API ${LANGGRAPH_API_VERSION})\n`);
    const app = new AppProcess({ args, cwd: config.root, env, port, onOutput: (t) => ctx.log('deploy', t) });
    this.running.set(ctx.revision.id, app);
    await app.startHealthy(this.o.healthTimeoutMs, ctx.signal);
    ctx.log('deploy', '[hangar] healthy: GET /ok answered 200\n');
    return { runtimeUrl: app.url, imageVersion: LANGGRAPH_API_VERSION };
  }

  async stop(_deploymentId: string, revisionId: string): Promise<void> {
    const app = this.running.get(revisionId);
    this.running.delete(revisionId);
    await app?.stop();
    const traces = this.traceEnvs.get(revisionId);
    this.traceEnvs.delete(revisionId);
    await traces?.release().catch((error: unknown) => this.o.logger.warn({ err: error }, 'could not revoke the tracing key of a revision'));
  }

  async teardown(target: DriverTarget['deployment']): Promise<void> {
    await rm(path.join(this.o.dir, target.id), { recursive: true, force: true });
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.running.keys()].map((id) => this.stop('', id)));
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

/** `npm ci` with a lockfile, `npm install` without; nothing when there is nothing to install. */
function defaultInstall(root: string, pkg: PackageJson | undefined): string | undefined {
  const deps = Object.keys({ ...pkg?.dependencies, ...pkg?.devDependencies });
  if (deps.length === 0) return undefined;
  return existsSync(path.join(root, 'package-lock.json')) ? 'npm ci' : 'npm install';
}

/** The environment every build step and application starts from: nothing of Hangar's own secrets. */
function baseEnv(): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'npm_config_cache', 'npm_config_registry', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY'];
  return Object.fromEntries(keep.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]));
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

/** The process entry: the LangGraph JS server's own startServer, with the options of this revision. */
function entryScript(): string {
  const server = pathToFileURL(hangarRequire.resolve('@langchain/langgraph-api/server')).href;
  return `// Written by Hangar: runs one revision on the LangGraph JS server.
import { startServer } from ${JSON.stringify(server)};
const options = JSON.parse(process.env.HANGAR_APP_OPTIONS);
delete process.env.HANGAR_APP_OPTIONS;
const { cleanup } = await startServer(options);
const stop = async () => { try { await cleanup(); } finally { process.exit(0); } };
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
`;
}

