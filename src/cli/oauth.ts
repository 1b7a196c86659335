// `hangar auth login PROVIDER` and `hangar repos INTEGRATION`: the OAuth flow and repository listing
// from a terminal, through the typed client.
import { describeError } from './target.js';
import { createHangarClient } from '../client/index.js';

/** Where the commands write. */
export interface CliOutput {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** A server and a key. */
export interface CliTarget {
  baseUrl: string;
  apiKey: string;
  /** Names the server when it cannot be reached (the CLI's targets carry one). */
  fetch?: typeof fetch;
}

/**
 * Authorize the key's principal with an OAuth provider: print the authorization URL, then wait
 * (long polls) until the browser flow completes. Returns the final status; throws on failure.
 */
export async function authLogin(
  target: CliTarget & {
    provider: string;
    scopes?: string[] | undefined;
    force?: boolean | undefined;
    /** Make the token scoped to this agent (its id): only its runs use it, before the default token. */
    agent?: string | undefined;
    /** How to name the provider to the user; `provider` when absent. */
    label?: string | undefined;
  },
  io: CliOutput,
): Promise<'COMPLETED'> {
  const client = createHangarClient(target);
  const label = `${target.label ?? target.provider}${target.agent !== undefined ? ` for agent ${target.agent}` : ''}`;
  const started = await client.POST('/v1/deepagents/auth-sessions', {
    body: {
      provider_id: target.provider,
      ...(target.scopes?.length ? { scopes: target.scopes } : {}),
      strategy: target.force ? 'CREATE' : 'REUSE',
      ...(target.agent !== undefined ? { agent_id: target.agent } : {}),
    },
  });
  if (!started.data) throw new Error(`could not start the authorization: ${describeError(started.error)}`);
  if (started.data.status === 'COMPLETED') {
    io.out(`Already authorized with ${label}.\n`);
    return 'COMPLETED';
  }
  io.out(`Open this URL in a browser to authorize ${label}:\n\n  ${started.data.verification_url}\n\n`);
  io.err('Waiting for the authorization to complete…\n');
  for (;;) {
    const polled = await client.GET('/v1/deepagents/auth-sessions/{session_id}', { params: { path: { session_id: started.data.id! }, query: { wait_seconds: 25 } } });
    if (!polled.data) throw new Error(`could not read the authorization: ${describeError(polled.error)}`);
    if (polled.data.status === 'COMPLETED') {
      io.out(`Authorized with ${label}.\n`);
      return 'COMPLETED';
    }
    if (polled.data.status !== 'PENDING') throw new Error(`the authorization did not complete: ${polled.data.error ?? polled.data.status}`);
  }
}

/** Print the repositories of a code-host integration as `owner/name  default_branch  url` lines. */
export async function listRepos(target: CliTarget & { integration: string; json?: boolean | undefined }, io: CliOutput): Promise<number> {
  const client = createHangarClient(target);
  const repos = await client.GET('/v1/integrations/forge/vcshost/{integration_id}/repos', { params: { path: { integration_id: target.integration } } });
  if (!repos.data) throw new Error(`could not list the repositories: ${describeError(repos.error)}`);
  if (target.json) {
    io.out(`${JSON.stringify(repos.data, null, 2)}\n`);
  } else {
    const width = Math.max(0, ...repos.data.map((r) => `${r.owner}/${r.name}`.length));
    for (const r of repos.data) io.out(`${`${r.owner}/${r.name}`.padEnd(width)}  ${r.default_branch}  ${r.url}\n`);
  }
  return repos.data.length;
}

