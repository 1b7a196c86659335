// A real bare git repository holding a tiny LangGraph JS application, made with the real `git`.
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as tar from 'tar';

const exec = promisify(execFile);

/** A bare repository and a working clone to commit from. */
export interface AppRepo {
  /** file:// URL of the bare repository. */
  url: string;
  /** file:// URL of the directory holding it (the base of a `git` integration). */
  directoryUrl: string;
  /** Commit the app (version `label`, or a broken one) on `branch` and push; returns the commit sha. */
  push(branch: string, app: { label: string; broken?: 'import' | 'build'; dependency?: string; build?: string }): Promise<string>;
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await exec('git', args, { cwd, env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' } });
  return stdout.trim();
}

/** The graph: echoes its input with a label, the config's env and whether a secret arrived. */
function graphSource(label: string, broken: boolean, dependency: boolean): string {
  return `import { Annotation, StateGraph, START, END } from '@langchain/langgraph';
${dependency ? "import { greeting } from 'greeting';\nprocess.env.GREETING = greeting;\n" : ''}${broken ? "throw new Error('this revision is broken on purpose');\n" : ''}const State = Annotation.Root({ input: Annotation(), output: Annotation(), history: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }) });
const reply = (s) => \`\${process.env.GREETING} \${s.input} from ${label}, secret \${process.env.APP_TOKEN === 'tok-123' ? 'present' : 'absent'}\`;
export const graph = new StateGraph(State)
  .addNode('echo', (s) => s.input === 'crash' ? process.exit(1) : ({ output: reply(s), history: [reply(s)] }))
  .addEdge(START, 'echo')
  .addEdge('echo', END)
  .compile();
`;
}

/** Make a bare repository in a temporary directory. */
export async function makeAppRepo(): Promise<AppRepo> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-git-'));
  // Builds fetch it as the deployments' user when Hangar runs as root: readable by others, as a
  // local repository must be then (docs/deployments.md).
  await chmod(root, 0o755);
  const bare = path.join(root, 'repos', 'app.git');
  await mkdir(path.dirname(bare));
  const work = path.join(root, 'work');
  await mkdir(work);
  await git(root, 'init', '--quiet', '--bare', '--initial-branch=main', bare);
  await git(work, 'init', '--quiet');
  await git(work, 'remote', 'add', 'origin', bare);
  return {
    url: `file://${bare}`,
    directoryUrl: `file://${root}/repos`,
    async push(branch, app) {
      await git(work, 'checkout', '--quiet', '-B', branch);
      await writeFile(path.join(work, 'graph.mjs'), graphSource(app.label, app.broken === 'import', app.dependency !== undefined));
      await writeFile(path.join(work, 'langgraph.json'), JSON.stringify({ node_version: '20', graphs: { echo: './graph.mjs:graph' }, env: { GREETING: 'hello' } }, null, 2));
      const pkg: Record<string, unknown> = { name: 'tiny-app', private: true, type: 'module' };
      if (app.broken === 'build') pkg.scripts = { build: 'node -e "process.exit(3)"' };
      else if (app.build) pkg.scripts = { build: app.build };
      await rm(path.join(work, 'vendor'), { recursive: true, force: true });
      await rm(path.join(work, 'package-lock.json'), { force: true });
      if (app.dependency) {
        // A dependency of its own, vendored as a package tarball, with a real lockfile made by npm.
        const v = app.dependency;
        const pkgDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-dep-'));
        await mkdir(path.join(pkgDir, 'package'));
        await writeFile(path.join(pkgDir, 'package', 'package.json'), JSON.stringify({ name: 'greeting', version: v, type: 'module', main: 'index.js' }));
        await writeFile(path.join(pkgDir, 'package', 'index.js'), `export const greeting = 'hello (greeting ${v})';\n`);
        await mkdir(path.join(work, 'vendor'));
        await tar.c({ gzip: true, file: path.join(work, 'vendor', `greeting-${v}.tgz`), cwd: pkgDir, portable: true, mtime: new Date(0) }, ['package']);
        pkg.dependencies = { greeting: `file:vendor/greeting-${v}.tgz` };
        await writeFile(path.join(work, 'package.json'), JSON.stringify(pkg, null, 2));
        await exec('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund', '--offline'], { cwd: work });
      }
      await writeFile(path.join(work, 'package.json'), JSON.stringify(pkg, null, 2));
      await git(work, 'add', '-A');
      await git(work, 'commit', '--quiet', '--allow-empty', '-m', app.label);
      await git(work, 'push', '--quiet', '--force', 'origin', branch);
      return git(work, 'rev-parse', 'HEAD');
    },
  };
}

/** Wait until `check` returns a value (polling the API as a client would); fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
