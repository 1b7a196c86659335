// Fetching a revision's source into its work directory: a git repository at a ref, an uploaded
// tarball, or a template shipped with Hangar.
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tar from 'tar';
import type { CodeHosts } from '../../core/deployments/ports.js';
import { uploadIdOf } from '../../core/deployments/service.js';
import { summarizeTarball, TarballRefused } from '../../core/deployments/tarball.js';
import type { UploadService } from '../../core/deployments/uploads.js';
import { DriverFailure, type DriverContext } from '../driver.js';
import { DISCARD, run, type CommandOptions } from './commands.js';
import type { EgressGuard } from '../../net/egress.js';
import { type LocalRepoPolicy, localRepoProblem } from '../../core/local-repos.js';

/** Templates shipped with Hangar (`internal_template`), one folder each. */
export const TEMPLATES_DIR = fileURLToPath(new URL('../../../templates/', import.meta.url));

/** What fetching needs besides the revision. */
export interface FetchDeps {
  codeHosts?: CodeHosts | undefined;
  uploads: UploadService;
  /** Which host directories may be cloned (file://), re-checked at fetch time. */
  localRepos: LocalRepoPolicy;
  /** The outbound policy: an http(s) repository is resolved, checked and pinned before git connects. */
  egress?: EgressGuard | undefined;
}

/** The names of the shipped templates. */
export async function templateNames(): Promise<string[]> {
  return existsSync(TEMPLATES_DIR) ? (await readdir(TEMPLATES_DIR, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name) : [];
}

/** Put the revision's source in `dir` (emptied first); returns the commit for git sources. */
export async function fetchSource(ctx: DriverContext, dir: string, deps: FetchDeps, cmd: Omit<CommandOptions, 'cwd'>, own: (dir: string) => Promise<void> = async () => {}): Promise<string | undefined> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  // git writes it as the user commands run as (the deployments' user, when Hangar is root).
  await own(dir);
  const { deployment, revision } = ctx;
  const rc = revision.sourceRevisionConfig;
  switch (deployment.source) {
    case 'vcshost':
      return fetchGit(ctx, dir, deps, cmd);
    case 'internal_source': {
      const id = uploadIdOf(rc.source_tarball_path ?? '');
      const content = id ? await deps.uploads.content(deployment.workspaceId, id) : undefined;
      if (!content) throw new DriverFailure(`the upload ${rc.source_tarball_path} is gone`);
      const file = path.join(path.dirname(dir), 'source.tar.gz');
      await writeFile(file, content);
      ctx.log('build', `[hangar] extracting ${rc.source_tarball_path} (${content.length} bytes)\n`);
      // Read through first (uploads stored before the check was made at upload): a tarball past its
      // limits is refused before anything is unpacked.
      let strip: number;
      try {
        strip = (await summarizeTarball(content)).commonPrefixDepth;
      } catch (error) {
        if (error instanceof TarballRefused) throw new DriverFailure(`the upload ${rc.source_tarball_path} cannot be unpacked: ${error.message}`);
        throw error;
      }
      // Entries that would escape the directory (absolute, ..) are refused by tar's defaults.
      await tar.x({ file, cwd: dir, strip });
      return undefined;
    }
    case 'internal_template': {
      const name = rc.repo_ref ?? 'deep-agent';
      const names = await templateNames();
      if (!names.includes(name)) throw new DriverFailure(`no template "${name}" (templates: ${names.join(', ')})`);
      ctx.log('build', `[hangar] copying template ${name}\n`);
      await cp(path.join(TEMPLATES_DIR, name), dir, { recursive: true });
      return undefined;
    }
    default:
      throw new DriverFailure(`the local driver cannot build source "${deployment.source}"`);
  }
}

async function fetchGit(ctx: DriverContext, dir: string, deps: FetchDeps, cmd: Omit<CommandOptions, 'cwd'>): Promise<string> {
  const sc = ctx.deployment.sourceConfig;
  const ref = ctx.revision.sourceRevisionConfig.repo_ref ?? 'HEAD';
  let url = sc.repo_url ?? '';
  let env: Record<string, string> = {};
  if (sc.integration_id) {
    if (!deps.codeHosts) throw new DriverFailure('code-host integrations are not available on this server');
    const resolved = await deps.codeHosts.resolve({ workspaceId: ctx.deployment.workspaceId, integrationId: sc.integration_id, repoUrl: url });
    url = resolved.cloneUrl;
    env = resolved.env ?? {};
  }
  const local = url.startsWith('file:');
  if (local) {
    // Integrations were checked when registered; the operator may have closed the door since.
    const problem = localRepoProblem(deps.localRepos, fileURLToPath(url));
    if (problem) throw new DriverFailure(problem);
  }
  const pin = local ? [] : await pinnedResolve(url, deps.egress);
  // git's own protocol allow-list also covers submodules and redirects to other transports.
  const o: CommandOptions = { ...cmd, cwd: dir, env: { ...cmd.env, ...env, GIT_TERMINAL_PROMPT: '0', GIT_ALLOW_PROTOCOL: local ? 'file' : 'http:https' } };
  // The URL can carry a credential: log the repository as configured, never the resolved URL.
  ctx.log('build', `[hangar] fetching ${sc.repo_url} at ${ref}\n`);
  await run('git', ['init', '--quiet'], o);
  // A local repository the operator allowed is theirs, not the deployments' user's (as which git
  // runs when Hangar is root): its upload-pack would refuse it ("dubious ownership"). git drops -c
  // settings for a local transport; its upload-pack command (run by a shell) takes them.
  const uploadPack = local ? ['--upload-pack', `git -c safe.directory=${shellQuote(fileURLToPath(url).replace(/\/+$/, ''))} upload-pack`] : [];
  await run('git', [...pin, 'fetch', ...uploadPack, '--quiet', '--depth', '1', url, ref], o);
  await run('git', ['checkout', '--quiet', '--detach', 'FETCH_HEAD'], o);
  const sha = (await run('git', ['rev-parse', 'HEAD'], { ...o, output: DISCARD })).trim();
  ctx.log('build', `[hangar] at commit ${sha}\n`);
  await rm(path.join(dir, '.git'), { recursive: true, force: true });
  return sha;
}

/**
 * `git -c` options that make git connect to the address the outbound policy checked (curl's resolve
 * list), and follow no redirect: a DNS answer that changes between check and connect gets nowhere.
 */
async function pinnedResolve(url: string, egress: EgressGuard | undefined): Promise<string[]> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DriverFailure(`${url} is not a URL git can fetch over http(s)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new DriverFailure(`only http(s) repositories are fetched, not ${parsed.protocol}`);
  if (!egress) return ['-c', 'http.followRedirects=false'];
  let address: string;
  try {
    address = await egress.resolve(parsed.hostname);
  } catch (error) {
    throw new DriverFailure(error instanceof Error ? error.message : String(error));
  }
  const port = parsed.port || (parsed.protocol === 'https:' ? '443' : '80');
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  return ['-c', 'http.followRedirects=false', '-c', `http.curloptResolve=${host}:${port}:${address.includes(':') ? `[${address}]` : address}`];
}

/** `s` as one word for a POSIX shell. */
function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
