// Replicas must share the secret key. A server started with another key than the one the database's
// secrets were sealed with used to serve, then fail every run that read a secret ("encrypted under
// another key"): it now refuses to start, naming HANGAR_SECRET_KEY, and the right key still starts.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { spawnHangar } from '../support/cli.js';
import { startTestServer } from '../support/server.js';

describe('HANGAR_SECRET_KEY', () => {
  it('a server with another key than the stored secrets refuses to start; the right key starts', async () => {
    const key = randomBytes(32).toString('hex');
    const first = await startTestServer({ env: { HANGAR_SECRET_KEY: key } });
    const created = await first.client.POST('/v1/deepagents/model-configs', { body: { name: 'sealed', model_id: 'openai:gpt-4o', api_key: 'sk-sealed-value' } });
    expect(created.response.status).toBe(201);
    await first.close();

    const other = randomBytes(32).toString('hex');
    const wrong = spawnHangar(['serve', '--port', '0', '--data-dir', first.dataDir], { DATABASE_URL: first.databaseUrl, HANGAR_SECRET_KEY: other });
    // Whichever comes first: the refusal (the process exits) or a server that started anyway.
    const startedAnyway = await Promise.race([wrong.waitFor(/Hangar is listening/).then(() => true), wrong.exited.then(() => false)]);
    if (startedAnyway) {
      wrong.child.kill('SIGTERM');
      await wrong.exited;
    }
    expect(startedAnyway, wrong.output()).toBe(false);
    expect(await wrong.exited).toBe(2);
    expect(wrong.output()).toMatch(/HANGAR_SECRET_KEY: the secrets in the database were encrypted under another key/);
    expect(wrong.output()).not.toContain(other);

    const right = spawnHangar(['serve', '--port', '0', '--data-dir', first.dataDir], { DATABASE_URL: first.databaseUrl, HANGAR_SECRET_KEY: key });
    const started = await Promise.race([right.waitFor(/Hangar is listening/).then(() => true), right.exited.then(() => false)]);
    expect(started, right.output()).toBe(true);
    right.child.kill('SIGTERM');
    expect(await right.exited, right.output()).toBe(0);
  }, 90_000);
});
