// `hangar keys list` as an operator reads it: the note given with `keys create --description` is how
// a key is recognised later, so the listing shows it (as the Console's Settings do).
import { describe, expect, it } from 'vitest';
import { runHangar } from '../support/cli.js';
import { freshDatabaseUrl } from '../support/database.js';

describe('hangar keys list', () => {
  it('shows the description each key was created with', async () => {
    const db = await freshDatabaseUrl();
    const created = await runHangar(['keys', 'create', '--database-url', db, '--role', 'viewer', '--description', 'nightly report bot']);
    expect(created.code, created.stderr).toBe(0);
    const plain = await runHangar(['keys', 'create', '--database-url', db]);
    expect(plain.code, plain.stderr).toBe(0);

    const list = await runHangar(['keys', 'list', '--database-url', db]);
    expect(list.code, list.stderr).toBe(0);
    const [header, ...rows] = list.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+WORKSPACE\s+ROLE\s+PREFIX\s+PRINCIPAL\s+DESCRIPTION\s+CREATED\s+REVOKED$/);
    expect(rows.find((r) => r.includes('viewer'))).toContain('nightly report bot');
    expect(rows.find((r) => r.includes('member'))).not.toContain('nightly report bot');
    // The key itself is never listed.
    expect(list.stdout).not.toContain(created.stdout.trim());
  });
});
