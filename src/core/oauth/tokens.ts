// Stored tokens per (workspace, principal, provider), and optionally per agent: sealed at rest, refreshed shortly before expiry
// under a row lock so that concurrent runs (on any replica) refresh once.
import type { ExpressionBuilder } from 'kysely';
import type { Db } from '../../db/index.js';
import type { Database } from '../../db/schema.js';
import type { Cipher } from '../secrets/cipher.js';
import type { OAuthProvider } from './providers.js';
import { requestTokens, TokenRequestError, type TokenSet } from './token-endpoint.js';

/** Refresh a token this long before it expires, so that a tool call never carries an expired one. */
export const REFRESH_SKEW_MS = 60_000;

/** Who holds a token. */
export interface TokenOwner {
  workspaceId: string;
  principal: string;
  provider: OAuthProvider;
  /** The agent the tokens are scoped to; null (or absent): the principal's default token. */
  agentId?: string | null | undefined;
}

/** Outcome of looking up a usable access token. */
export type TokenLookup = { kind: 'ok'; accessToken: string; expiresAt: Date | null } | { kind: 'missing' } | { kind: 'revoked_by_provider' };

/** Token storage and refresh. */
export class TokenStore {
  constructor(
    private readonly db: Db,
    private readonly cipher: Cipher,
    private readonly fetchImpl: typeof fetch,
  ) {}

  /** Store (replace) the owner's tokens. */
  async save(owner: TokenOwner, tokens: TokenSet, db: Db = this.db): Promise<void> {
    const agentId = owner.agentId ?? null;
    const values = {
      workspace_id: owner.workspaceId,
      provider_ref: owner.provider.id,
      principal: owner.principal,
      agent_id: agentId,
      tokens_encrypted: this.cipher.encryptJson(tokens),
      expires_at: tokens.expires_at ? new Date(tokens.expires_at) : null,
    };
    const update = { tokens_encrypted: values.tokens_encrypted, expires_at: values.expires_at, updated_at: new Date() };
    // One unique index per kind of token (migrations/1900_oauth_agent_tokens.sql): name the one that applies.
    await db
      .insertInto('oauth_tokens')
      .values(values)
      .onConflict((oc) =>
        agentId === null
          ? oc.columns(['workspace_id', 'provider_ref', 'principal']).where('agent_id', 'is', null).doUpdateSet(update)
          : oc.columns(['workspace_id', 'provider_ref', 'principal', 'agent_id']).where('agent_id', 'is not', null).doUpdateSet(update),
      )
      .execute();
  }

  /** Whether the owner has tokens that are usable now or can be refreshed. */
  async has(owner: TokenOwner): Promise<boolean> {
    const row = await this.db.selectFrom('oauth_tokens').select(['tokens_encrypted', 'expires_at']).where(ownerIs(owner)).executeTakeFirst();
    if (!row) return false;
    return !expiring(row.expires_at) || this.cipher.decryptJson<TokenSet>(row.tokens_encrypted).refresh_token !== undefined;
  }

  /** A usable access token, refreshed first when it expires within REFRESH_SKEW_MS. */
  async accessToken(owner: TokenOwner): Promise<TokenLookup> {
    const fresh = await this.read(owner, this.db);
    if (fresh === undefined) return { kind: 'missing' };
    if (!expiring(fresh.expiresAt)) return { kind: 'ok', accessToken: fresh.tokens.access_token, expiresAt: fresh.expiresAt };
    return this.db.transaction().execute(async (trx) => {
      // Re-read under the lock: another run may have refreshed meanwhile.
      const current = await this.read(owner, trx, true);
      if (current === undefined) return { kind: 'missing' } as const;
      if (!expiring(current.expiresAt)) return { kind: 'ok', accessToken: current.tokens.access_token, expiresAt: current.expiresAt } as const;
      if (!current.tokens.refresh_token) {
        await this.remove(owner, trx);
        return { kind: 'missing' } as const;
      }
      try {
        const next = await requestTokens(owner.provider, { grant_type: 'refresh_token', refresh_token: current.tokens.refresh_token }, this.fetchImpl);
        // Providers that do not rotate refresh tokens omit it: keep the one we have.
        const merged: TokenSet = { ...next, refresh_token: next.refresh_token ?? current.tokens.refresh_token };
        await this.save(owner, merged, trx);
        return { kind: 'ok', accessToken: merged.access_token, expiresAt: merged.expires_at ? new Date(merged.expires_at) : null } as const;
      } catch (error) {
        if (error instanceof TokenRequestError && error.invalidGrant) {
          await this.remove(owner, trx);
          return { kind: 'revoked_by_provider' } as const;
        }
        throw error;
      }
    });
  }

  /** Forget the owner's tokens. */
  async remove(owner: TokenOwner, db: Db = this.db): Promise<void> {
    await db.deleteFrom('oauth_tokens').where(ownerIs(owner)).execute();
  }

  private async read(owner: TokenOwner, db: Db, lock = false) {
    let query = db.selectFrom('oauth_tokens').select(['tokens_encrypted', 'expires_at']).where(ownerIs(owner));
    if (lock) query = query.forUpdate();
    const row = await query.executeTakeFirst();
    if (!row) return undefined;
    return { tokens: this.cipher.decryptJson<TokenSet>(row.tokens_encrypted), expiresAt: row.expires_at };
  }
}

/** Narrow a query of `oauth_tokens` to the owner's one row (the default token when no agent is named). */
function ownerIs(owner: TokenOwner) {
  return (eb: ExpressionBuilder<Database, 'oauth_tokens'>) =>
    eb.and([
      eb('workspace_id', '=', owner.workspaceId),
      eb('provider_ref', '=', owner.provider.id),
      eb('principal', '=', owner.principal),
      owner.agentId ? eb('agent_id', '=', owner.agentId) : eb('agent_id', 'is', null),
    ]);
}

function expiring(expiresAt: Date | null): boolean {
  return expiresAt !== null && expiresAt.getTime() - REFRESH_SKEW_MS <= Date.now();
}
