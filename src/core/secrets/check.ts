// At start: the secret key must be the one the database's secrets were sealed with. A replica (or a
// restart) with another key would serve, and then fail every run, tool call and deployment that
// reads a secret; it stops at once instead, naming the setting.
import type pg from 'pg';
import { ConfigError } from '../../config/index.js';

/** Every column holding sealed values (`v1:<key id>:…`). */
const SEALED: readonly (readonly [table: string, column: string])[] = [
  ['mcp_servers', 'headers_encrypted'],
  ['model_configs', 'api_key_encrypted'],
  ['oauth_providers', 'client_secret_encrypted'],
  ['oauth_tokens', 'tokens_encrypted'],
  ['vcshost_integrations', 'credentials_encrypted'],
  ['deployment_revisions', 'secrets_encrypted'],
  ['webhook_secrets', 'secret'],
];

/**
 * Refuse to start when the database holds sealed secrets and none of them was sealed under this key
 * (`keyId`); `source` says where the key came from.
 */
export async function checkSecretKey(pool: pg.Pool, keyId: string, source: string): Promise<void> {
  const prefix = `v1:${keyId}:`;
  const mine = SEALED.map(([t, c]) => `SELECT 1 FROM ${t} WHERE left(${c}, ${prefix.length}) = $1`).join(' UNION ALL ');
  if ((await pool.query(`SELECT EXISTS (${mine}) AS found`, [prefix])).rows[0]?.found === true) return;
  const other = SEALED.map(([t, c]) => `(SELECT split_part(${c}, ':', 2) AS key_id FROM ${t} WHERE ${c} LIKE 'v1:%' LIMIT 1)`).join(' UNION ALL ');
  const found = (await pool.query<{ key_id: string }>(`SELECT key_id FROM (${other}) AS sealed LIMIT 1`)).rows[0];
  if (!found) return;
  throw new ConfigError(
    `HANGAR_SECRET_KEY: the secrets in the database were encrypted under another key (key id ${found.key_id}; this key, from ${source}, has id ${keyId}): ` +
      'set HANGAR_SECRET_KEY to the key they were stored with (every replica needs the same key)',
  );
}
