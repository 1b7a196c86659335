// PKCE (RFC 7636): a random verifier kept by Hangar and the challenge sent with the authorization.
import { createHash, randomBytes } from 'node:crypto';
import type { CodeChallengeMethod } from './providers.js';

/** A new code verifier: 43 characters of base64url (32 random bytes), the shortest RFC 7636 allows. */
export function newCodeVerifier(): string {
  return randomBytes(32).toString('base64url');
}

/** The code challenge of `verifier` under `method`. */
export function codeChallenge(verifier: string, method: CodeChallengeMethod): string {
  return method === 'plain' ? verifier : createHash('sha256').update(verifier, 'ascii').digest('base64url');
}
