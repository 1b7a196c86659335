// Code-host integrations of a workspace (`/v1/integrations/forge/vcshost`): create, list, delete, and
// list repositories. Credentials are sealed at rest; `get` hands them, decrypted, to other services.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Selectable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { VcshostIntegrationsTable } from '../../db/tables/integrations.js';
import { type Caller, requireWrite } from '../caller.js';
import { HangarError, invalidField } from '../errors.js';
import { isHttpUrl } from '../mcp-servers/url.js';
import type { EgressGuard } from '../../net/egress.js';
import { checkOutboundUrl, laptopEgress } from '../egress.js';
import { type LocalRepoPolicy, localRepoProblem, NO_LOCAL_REPOS } from '../local-repos.js';
import type { Cipher } from '../secrets/cipher.js';
import { listBareRepositories } from './git-directory.js';
import { checkAppPrivateKey, githubToken, listGithubRepositories } from './github.js';
import type { GithubCredentials, Integration, Repository, ResolvedIntegration } from './types.js';

/** GitHub.com's REST API; Enterprise servers use `https://<host>/api/v3`. */
export const GITHUB_API_URL = 'https://api.github.com';

/** A create request (wire names). */
export type CreateIntegrationInput =
  | {
      kind: 'github';
      name?: string | undefined;
      base_url?: string | undefined;
      token?: string | undefined;
      app?: { app_id: string | number; installation_id: string | number; private_key: string } | undefined;
    }
  | { kind: 'git'; name?: string | undefined; base_url: string };

/** CRUD of integrations and repository listing, scoped by workspace. */
export class IntegrationService {
  constructor(
    private readonly db: Db,
    private readonly cipher: Cipher,
    private readonly fetchImpl: typeof fetch = fetch,
    private readonly policy: { egress: EgressGuard; localRepos: LocalRepoPolicy } = { egress: laptopEgress(), localRepos: NO_LOCAL_REPOS },
  ) {}

  async create(caller: Caller, input: CreateIntegrationInput): Promise<Integration> {
    requireWrite(caller);
    const prepared = input.kind === 'github' ? prepareGithub(input, this.policy.egress) : prepareGit(input, this.policy.localRepos);
    const row = await this.db
      .insertInto('vcshost_integrations')
      .values({
        workspace_id: caller.workspaceId,
        kind: input.kind,
        name: prepared.name,
        base_url: prepared.baseUrl,
        auth_kind: prepared.credentials?.type ?? null,
        credentials_encrypted: prepared.credentials ? this.cipher.encryptJson(prepared.credentials) : null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.toDomain(row);
  }

  async list(caller: Caller, page: { limit: number; offset: number }): Promise<{ integrations: Integration[]; offset: number }> {
    const rows = await this.db
      .selectFrom('vcshost_integrations')
      .selectAll()
      .where('workspace_id', '=', caller.workspaceId)
      .orderBy('created_at')
      .orderBy('id')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
    return { integrations: rows.map((r) => this.toDomain(r)), offset: page.offset + rows.length };
  }

  /**
   * The integration with its decrypted credentials (github) or directory (git). Takes a caller or a
   * bare workspace id so that background work (deployments) can use it too. 404 when unknown.
   */
  async get(scope: Caller | string, id: string): Promise<ResolvedIntegration> {
    const workspaceId = typeof scope === 'string' ? scope : scope.workspaceId;
    const row = await this.db.selectFrom('vcshost_integrations').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound(id);
    const integration = this.toDomain(row);
    if (integration.kind === 'git') return { ...integration, kind: 'git', credentials: null, directory: fileURLToPath(integration.baseUrl) };
    return { ...integration, kind: 'github', credentials: this.cipher.decryptJson<GithubCredentials>(row.credentials_encrypted!) };
  }

  /**
   * HTTP credentials for `git clone` of a repository of a github integration (an installation token
   * is minted for app credentials); undefined for `git` integrations, which need none.
   */
  async gitCredentials(scope: Caller | string, id: string): Promise<{ username: string; password: string } | undefined> {
    const integration = await this.get(scope, id);
    if (integration.kind === 'git') return undefined;
    return { username: 'x-access-token', password: await githubToken(integration.baseUrl, integration.credentials, this.fetchImpl) };
  }

  async delete(caller: Caller, id: string): Promise<void> {
    requireWrite(caller);
    const result = await this.db.deleteFrom('vcshost_integrations').where('workspace_id', '=', caller.workspaceId).where('id', '=', id).executeTakeFirst();
    if (result.numDeletedRows === 0n) throw notFound(id);
  }

  /** Every repository reachable through the integration, all pages of the code host followed. */
  async repositories(caller: Caller, id: string): Promise<Repository[]> {
    const integration = await this.get(caller, id);
    if (integration.kind === 'git') {
      return listBareRepositories({ integrationId: integration.id, integrationName: integration.name, directory: integration.directory });
    }
    return listGithubRepositories({ integrationId: integration.id, baseUrl: integration.baseUrl, credentials: integration.credentials, fetch: this.fetchImpl });
  }

  private toDomain(row: Selectable<VcshostIntegrationsTable>): Integration {
    let appId: string | null = null;
    let installationId: string | null = null;
    if (row.auth_kind === 'app' && row.credentials_encrypted) {
      const creds = this.cipher.decryptJson<GithubCredentials>(row.credentials_encrypted);
      if (creds.type === 'app') ({ appId, installationId } = creds);
    }
    return {
      id: row.id,
      workspaceId: row.workspace_id,
      kind: row.kind,
      name: row.name,
      baseUrl: row.base_url,
      authType: row.auth_kind,
      appId,
      installationId,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }
}

function prepareGithub(input: Extract<CreateIntegrationInput, { kind: 'github' }>, egress: EgressGuard) {
  const baseUrl = (input.base_url ?? GITHUB_API_URL).replace(/\/+$/, '');
  if (!isHttpUrl(baseUrl)) throw invalidField(['base_url'], 'must be an absolute http:// or https:// URL', 'url_error');
  checkOutboundUrl(egress, ['base_url'], baseUrl);
  if ((input.token === undefined) === (input.app === undefined)) {
    throw invalidField(input.token === undefined ? ['token'] : ['app'], 'give exactly one of token or app', 'value_error');
  }
  let credentials: GithubCredentials;
  if (input.token !== undefined) {
    credentials = { type: 'token', token: input.token };
  } else {
    const app = input.app!;
    if (!checkAppPrivateKey(app.private_key)) throw invalidField(['app', 'private_key'], 'must be the app’s RSA private key in PEM form', 'value_error');
    credentials = { type: 'app', appId: String(app.app_id), installationId: String(app.installation_id), privateKey: app.private_key };
  }
  return { name: input.name ?? new URL(baseUrl).hostname, baseUrl, credentials };
}

function prepareGit(input: Extract<CreateIntegrationInput, { kind: 'git' }>, localRepos: LocalRepoPolicy) {
  let directory: string;
  if (input.base_url.startsWith('file:')) {
    try {
      directory = fileURLToPath(input.base_url);
    } catch {
      throw invalidField(['base_url'], 'must be an absolute directory path or a file:// URL on this server', 'value_error');
    }
  } else if (path.isAbsolute(input.base_url)) {
    directory = path.resolve(input.base_url);
  } else {
    throw invalidField(['base_url'], 'must be an absolute directory path or a file:// URL on this server', 'value_error');
  }
  const refused = localRepoProblem(localRepos, directory);
  if (refused) throw invalidField(['base_url'], refused, 'local_repo_refused');
  return { name: input.name ?? (path.basename(directory) || 'git'), baseUrl: pathToFileURL(directory).toString(), credentials: undefined };
}

function notFound(id: string): HangarError {
  return new HangarError('integration_not_found', `no code-host integration ${id} in this workspace`);
}
