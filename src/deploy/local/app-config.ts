// Reading the LangGraph application config (`langgraph.json` format) named by agentgraph_config_path.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DriverFailure } from '../driver.js';

/** The parts of the LangGraph application config the local driver uses. */
export interface AppConfig {
  /** Directory of the config file: the application's root. */
  root: string;
  graphs: Record<string, string | { path: string; description?: string }>;
  /** Environment from `env` (an object, or a path to a .env file relative to the root). */
  env: Record<string, string>;
  nodeVersion: string | undefined;
  auth?: { path?: string; disable_studio_auth?: boolean } | undefined;
  http?: Record<string, unknown> | undefined;
}

/** Read and check the config at `relPath` inside `sourceDir`. */
export async function readAppConfig(sourceDir: string, relPath: string): Promise<AppConfig> {
  const file = path.resolve(sourceDir, relPath);
  if (!file.startsWith(path.resolve(sourceDir) + path.sep)) throw new DriverFailure(`agentgraph_config_path "${relPath}" leaves the source`);
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new DriverFailure(`cannot read the application config ${relPath}: ${(error as Error).message}`);
  }
  const root = path.dirname(file);
  const graphs = raw.graphs;
  if (!graphs || typeof graphs !== 'object' || Object.keys(graphs).length === 0) {
    throw new DriverFailure(`${relPath}: "graphs" must name at least one graph ({"agent": "./src/agent.ts:graph"})`);
  }
  let env: Record<string, string> = {};
  if (typeof raw.env === 'string') {
    try {
      env = parseDotenv(await readFile(path.resolve(root, raw.env), 'utf8'));
    } catch (error) {
      throw new DriverFailure(`${relPath}: cannot read env file ${raw.env}: ${(error as Error).message}`);
    }
  } else if (raw.env && typeof raw.env === 'object') {
    env = Object.fromEntries(Object.entries(raw.env as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
  }
  const nodeVersion = raw.node_version === undefined ? undefined : String(raw.node_version);
  if (nodeVersion) {
    const want = Number.parseInt(nodeVersion, 10);
    const have = Number.parseInt(process.versions.node, 10);
    if (!Number.isFinite(want) || want > have) {
      throw new DriverFailure(`${relPath}: node_version ${nodeVersion} is not available (this host runs Node ${process.versions.node})`);
    }
  }
  return {
    root,
    graphs: graphs as AppConfig['graphs'],
    env,
    nodeVersion,
    auth: raw.auth as AppConfig['auth'],
    http: raw.http as AppConfig['http'],
  };
}

/** KEY=value lines of a .env file (comments, `export`, and simple quotes understood). */
export function parseDotenv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m) continue;
    let value = m[2]!;
    if (/^(["']).*\1$/.test(value)) value = value.slice(1, -1);
    else value = value.replace(/\s+#.*$/, '');
    out[m[1]!] = value;
  }
  return out;
}
