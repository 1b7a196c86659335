// Repositories of a `github` integration through the GitHub REST API (GitHub.com or Enterprise), every
// page followed through `Link: rel="next"`. App credentials are first exchanged for an installation token.
import { createPrivateKey, sign } from 'node:crypto';
import { HangarError } from '../errors.js';
import { BodyTooLarge, readTextBounded } from '../../net/body.js';
import type { GithubCredentials, Repository } from './types.js';

const TIMEOUT_MS = 20_000;
const MAX_PAGES = 1000;
/** A page of 100 repositories is well under 1 MiB; a code host is not trusted to stop. */
export const MAX_PAGE_BYTES = 8 * 1024 * 1024;

interface GithubRepo {
  id: number;
  name: string;
  owner: { login: string };
  html_url: string;
  default_branch: string;
}

/** A bearer token for the API: the personal/OAuth token itself, or a fresh installation token. */
export async function githubToken(baseUrl: string, credentials: GithubCredentials, fetchImpl: typeof fetch = fetch): Promise<string> {
  if (credentials.type === 'token') return credentials.token;
  const jwt = appJwt(credentials.appId, credentials.privateKey);
  const response = await call(fetchImpl, `${baseUrl}/app/installations/${encodeURIComponent(credentials.installationId)}/access_tokens`, `Bearer ${jwt}`, 'POST');
  if (response.status === 404) {
    throw new HangarError('vcshost_credentials_rejected', `the code host knows no installation ${credentials.installationId} of app ${credentials.appId}`);
  }
  const body = (await expectOk(response)) as { token?: unknown };
  if (typeof body.token !== 'string') throw new HangarError('vcshost_error', 'the code host answered an installation token request without a token');
  return body.token;
}

/** Every repository the credentials can see. */
export async function listGithubRepositories(input: {
  integrationId: string;
  baseUrl: string;
  credentials: GithubCredentials;
  fetch?: typeof fetch;
}): Promise<Repository[]> {
  const fetchImpl = input.fetch ?? fetch;
  const token = await githubToken(input.baseUrl, input.credentials, fetchImpl);
  // A token lists what its user can reach; an installation lists what the app was granted.
  let next: string | undefined =
    input.credentials.type === 'token' ? `${input.baseUrl}/user/repos?per_page=100` : `${input.baseUrl}/installation/repositories?per_page=100`;
  const origin = new URL(input.baseUrl).origin;
  const repos: Repository[] = [];
  for (let page = 0; next !== undefined; page++) {
    if (page >= MAX_PAGES) throw new HangarError('vcshost_error', `the code host returned more than ${MAX_PAGES} pages of repositories`);
    const response = await call(fetchImpl, next, `Bearer ${token}`, 'GET');
    const body = await expectOk(response);
    const items = (Array.isArray(body) ? body : (body as { repositories?: unknown }).repositories) as GithubRepo[] | undefined;
    if (!Array.isArray(items)) throw new HangarError('vcshost_error', 'the code host answered the repository list in an unexpected shape');
    for (const r of items) {
      if (typeof r?.id !== 'number' || typeof r.name !== 'string' || typeof r.owner?.login !== 'string') {
        throw new HangarError('vcshost_error', 'the code host answered a repository without id, name or owner');
      }
      repos.push({ host_integration_id: input.integrationId, id: r.id, name: r.name, owner: r.owner.login, url: r.html_url, default_branch: r.default_branch });
    }
    next = nextLink(response.headers.get('link'));
    // Never send the credential to another host than the configured one.
    if (next !== undefined && new URL(next).origin !== origin) throw new HangarError('vcshost_error', `the code host pointed the next page at another host (${new URL(next).origin})`);
  }
  return repos;
}

/** The `rel="next"` URL of a Link header (RFC 8288), if any. */
export function nextLink(header: string | null): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(',')) {
    const [target, ...params] = part.split(';');
    const url = /^\s*<([^>]*)>\s*$/.exec(target ?? '')?.[1];
    const rel = params.map((p) => /^\s*rel\s*=\s*"?([^"]*)"?\s*$/i.exec(p)?.[1]).find((r) => r !== undefined);
    if (url && rel?.split(/\s+/).includes('next')) return url;
  }
  return undefined;
}

/** Check that `pem` is an RSA private key a GitHub App JWT can be signed with. */
export function checkAppPrivateKey(pem: string): boolean {
  try {
    return createPrivateKey(pem).asymmetricKeyType === 'rsa';
  } catch {
    return false;
  }
}

/** The app's JWT (RS256, issued a minute in the past against clock drift, valid 9 minutes). */
function appJwt(appId: string, privateKey: string): string {
  const now = Math.floor(Date.now() / 1000);
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${encode({ alg: 'RS256', typ: 'JWT' })}.${encode({ iat: now - 60, exp: now + 540, iss: appId })}`;
  return `${unsigned}.${sign('RSA-SHA256', Buffer.from(unsigned), privateKey).toString('base64url')}`;
}

async function call(fetchImpl: typeof fetch, url: string, authorization: string, method: 'GET' | 'POST'): Promise<Response> {
  try {
    return await fetchImpl(url, {
      method,
      headers: { authorization, accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28', 'user-agent': 'hangar' },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : error instanceof Error ? error.message : String(error);
    throw new HangarError('vcshost_unreachable', `could not reach the code host at ${new URL(url).origin}: ${cause}`);
  }
}

async function expectOk(response: Response): Promise<unknown> {
  if (response.status === 401) {
    throw new HangarError('vcshost_credentials_rejected', 'the code host rejected the integration’s credentials (HTTP 401): the token is wrong, expired or revoked');
  }
  if (response.status === 403 && response.headers.get('x-ratelimit-remaining') === '0') {
    throw new HangarError('vcshost_error', 'the code host’s API rate limit is exhausted; try again later');
  }
  if (response.status === 403) {
    throw new HangarError('vcshost_credentials_rejected', 'the code host refused access with these credentials (HTTP 403)');
  }
  if (!response.ok) throw new HangarError('vcshost_error', `the code host answered HTTP ${response.status}`);
  const text = await readBounded(response);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HangarError('vcshost_error', 'the code host answered with a body that is not JSON');
  }
}

/** The body as text; past MAX_PAGE_BYTES, or when it stops arriving (the request's timeout), a 502. */
async function readBounded(response: Response): Promise<string> {
  try {
    return await readTextBounded(response, MAX_PAGE_BYTES);
  } catch (error) {
    if (error instanceof BodyTooLarge) throw new HangarError('vcshost_error', `the code host answered with more than ${MAX_PAGE_BYTES} bytes for one page`);
    throw new HangarError('vcshost_unreachable', 'the code host did not finish its answer');
  }
}
