// Code-host integrations: the shapes shared by the service, the listers and their callers (deployments).

/** Credentials of a `github` integration, decrypted. */
export type GithubCredentials =
  | { type: 'token'; token: string }
  | { type: 'app'; appId: string; installationId: string; privateKey: string };

/** An integration as listed: no credentials. */
export interface Integration {
  id: string;
  workspaceId: string;
  kind: 'github' | 'git';
  name: string;
  /** `github`: the REST API base (https://api.github.com or an Enterprise `/api/v3` URL). `git`: a `file://` URL of a directory. */
  baseUrl: string;
  authType: 'token' | 'app' | null;
  /** For GitHub App credentials: the (non-secret) app and installation ids. */
  appId: string | null;
  installationId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * An integration with what it takes to use it (the deployments helper reads this): for `github`
 * the decrypted credentials, for `git` the directory of bare repositories.
 */
export type ResolvedIntegration =
  | (Integration & { kind: 'github'; credentials: GithubCredentials })
  | (Integration & { kind: 'git'; credentials: null; directory: string });

/** One repository (SPEC "Code-host repository"). */
export interface Repository {
  host_integration_id: string;
  id: number;
  name: string;
  owner: string;
  url: string;
  default_branch: string;
}
