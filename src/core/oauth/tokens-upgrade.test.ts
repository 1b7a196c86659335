// Upgrading a database that already holds tokens to per-agent tokens (migrations/1900): every token
// stored before becomes its principal's default token, still read and refreshed-in-place by the token
// store, and saving it again replaces it (the upsert names the partial unique index) instead of
// adding a second default token. Run on a real PostgreSQL with the migrations as shipped.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../../../test/support/database.js';
import { openDatabase, type DatabaseHandle } from '../../db/index.js';
import { migrate, MIGRATIONS_DIR } from '../../db/migrate.js';
import { createCipher } from '../secrets/cipher.js';
import type { OAuthProvider } from './providers.js';
import { TokenStore } from './tokens.js';

let handle: DatabaseHandle;
const cipher = createCipher(randomBytes(32));

beforeAll(async () => {
  handle = openDatabase(await freshDatabaseUrl());
});
afterAll(async () => {
  await handle?.close();
});

describe('migration 1900 (per-agent OAuth tokens) over a database that holds tokens', () => {
  it('keeps each stored token as its principal’s default, read and replaced by the token store', async () => {
    // The database as the release before it left it: every migration before 1900.
    const before = await mkdtemp(path.join(os.tmpdir(), 'hangar-migrations-before-'));
    for (const file of await readdir(MIGRATIONS_DIR)) {
      if (/^\d{4}_/.test(file) && file < '1900') await symlink(path.join(MIGRATIONS_DIR, file), path.join(before, file));
    }
    await migrate(handle.pool, before);
    const { rows: ws } = await handle.pool.query<{ id: string }>("INSERT INTO workspaces (name) VALUES ('upgrade') RETURNING id");
    const workspaceId = ws[0]!.id;
    const { rows: pr } = await handle.pool.query<{ id: string }>(
      "INSERT INTO oauth_providers (workspace_id, provider_id, name, client_id, auth_url, token_url) VALUES ($1, 'gh', 'GitHub', 'c', 'http://127.0.0.1:1/a', 'http://127.0.0.1:1/t') RETURNING id",
      [workspaceId],
    );
    for (const principal of ['ada@example.com', 'bo@example.com']) {
      await handle.pool.query('INSERT INTO oauth_tokens (workspace_id, provider_ref, principal, tokens_encrypted) VALUES ($1, $2, $3, $4)', [
        workspaceId,
        pr[0]!.id,
        principal,
        cipher.encryptJson({ access_token: `old-${principal}` }),
      ]);
    }

    expect(await migrate(handle.pool)).toContain('1900_oauth_agent_tokens');

    const provider = { id: pr[0]!.id, workspaceId } as OAuthProvider;
    const store = new TokenStore(handle.db, cipher, fetch);
    const ada = { workspaceId, principal: 'ada@example.com', provider };
    expect(await store.accessToken(ada)).toMatchObject({ kind: 'ok', accessToken: 'old-ada@example.com' });
    expect(await store.accessToken({ ...ada, principal: 'bo@example.com' })).toMatchObject({ kind: 'ok', accessToken: 'old-bo@example.com' });
    await store.save(ada, { access_token: 'new', token_type: 'Bearer' });
    expect(await store.accessToken(ada)).toMatchObject({ kind: 'ok', accessToken: 'new' });
    const { rows } = await handle.pool.query('SELECT principal, agent_id FROM oauth_tokens ORDER BY principal');
    expect(rows).toEqual([
      { principal: 'ada@example.com', agent_id: null },
      { principal: 'bo@example.com', agent_id: null },
    ]);
    // The database still refuses a second default token for the same principal.
    await expect(
      handle.pool.query('INSERT INTO oauth_tokens (workspace_id, provider_ref, principal, tokens_encrypted) VALUES ($1, $2, $3, $4)', [workspaceId, pr[0]!.id, 'ada@example.com', 'x']),
    ).rejects.toThrow(/oauth_tokens_default/);
  });
});
