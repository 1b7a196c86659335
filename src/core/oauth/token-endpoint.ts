// Talking to a provider's token endpoint (RFC 6749 §4.1.3 and §6), with the client authentication
// the provider record names.
import type { OAuthProvider } from './providers.js';
import { HangarError } from '../errors.js';
import { BodyTooLarge, readTextBounded } from '../../net/body.js';

/** Tokens as the provider returned them. */
export interface TokenSet {
  access_token: string;
  token_type: string;
  refresh_token?: string;
  scope?: string;
  /** Absolute expiry computed from `expires_in`; undefined when the provider gave none. */
  expires_at?: string;
}

/** A grant sent to the token endpoint. */
export type Grant =
  | { grant_type: 'authorization_code'; code: string; redirect_uri: string; code_verifier?: string }
  | { grant_type: 'refresh_token'; refresh_token: string };

/** Why a token request failed; `invalidGrant` means the code or refresh token is no longer good. */
export class TokenRequestError extends HangarError {
  constructor(
    detail: string,
    readonly invalidGrant: boolean,
  ) {
    super('oauth_provider_error', detail);
  }
}

const TIMEOUT_MS = 15_000;
/** A token response is a few hundred bytes; a provider is not trusted to stop. */
export const MAX_TOKEN_RESPONSE_BYTES = 1024 * 1024;
/** Longer lifetimes (or nonsense such as 1e20 seconds, past the end of JavaScript dates) count as this: ten years. */
const MAX_EXPIRES_IN_SECONDS = 10 * 365 * 24 * 3600;

/** POST `grant` to the provider's token URL and return the tokens. */
export async function requestTokens(provider: OAuthProvider, grant: Grant, fetchImpl: typeof fetch = fetch): Promise<TokenSet> {
  const form = new URLSearchParams(Object.entries(grant).filter((e): e is [string, string] => typeof e[1] === 'string'));
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  switch (provider.tokenEndpointAuthMethod) {
    case 'none':
      form.set('client_id', provider.clientId);
      break;
    case 'client_secret_post':
      form.set('client_id', provider.clientId);
      if (provider.clientSecret !== null) form.set('client_secret', provider.clientSecret);
      break;
    case 'client_secret_basic': {
      // RFC 6749 §2.3.1: both parts form-urlencoded before base64.
      const user = `${formEncode(provider.clientId)}:${formEncode(provider.clientSecret ?? '')}`;
      headers.authorization = `Basic ${Buffer.from(user, 'utf8').toString('base64')}`;
      break;
    }
  }
  let response: Response;
  try {
    response = await fetchImpl(provider.tokenUrl, { method: 'POST', headers, body: form, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (error) {
    throw new TokenRequestError(`could not reach the token endpoint of OAuth provider "${provider.providerId}": ${reason(error)}`, false);
  }
  const text = await readBounded(response, provider, grant.grant_type);
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Some providers answer form-encoded; accept that too.
    body = Object.fromEntries(new URLSearchParams(text));
  }
  if (!response.ok || typeof body.error === 'string') {
    const code = typeof body.error === 'string' ? body.error : `HTTP ${response.status}`;
    const description = typeof body.error_description === 'string' ? `: ${body.error_description}` : '';
    throw new TokenRequestError(`OAuth provider "${provider.providerId}" refused the ${grant.grant_type} grant (${code}${description})`, code === 'invalid_grant');
  }
  if (typeof body.access_token !== 'string' || body.access_token === '') {
    throw new TokenRequestError(`OAuth provider "${provider.providerId}" answered without an access_token`, false);
  }
  const expiresIn = Number(body.expires_in);
  return {
    access_token: body.access_token,
    token_type: typeof body.token_type === 'string' ? body.token_type : 'Bearer',
    ...(typeof body.refresh_token === 'string' ? { refresh_token: body.refresh_token } : {}),
    ...(typeof body.scope === 'string' ? { scope: body.scope } : {}),
    ...(Number.isFinite(expiresIn) && expiresIn > 0 ? { expires_at: new Date(Date.now() + Math.min(expiresIn, MAX_EXPIRES_IN_SECONDS) * 1000).toISOString() } : {}),
  };
}

/** The body as text, refused past MAX_TOKEN_RESPONSE_BYTES or when it stops arriving (the request's timeout). */
async function readBounded(response: Response, provider: OAuthProvider, grantType: string): Promise<string> {
  try {
    return await readTextBounded(response, MAX_TOKEN_RESPONSE_BYTES);
  } catch (error) {
    if (error instanceof BodyTooLarge) {
      throw new TokenRequestError(`OAuth provider "${provider.providerId}" answered the ${grantType} grant with more than ${MAX_TOKEN_RESPONSE_BYTES} bytes`, false);
    }
    throw new TokenRequestError(`the token endpoint of OAuth provider "${provider.providerId}" did not finish its answer: ${reason(error)}`, false);
  }
}

function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}

function reason(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined;
  return cause ?? (error instanceof Error ? error.message : String(error));
}
