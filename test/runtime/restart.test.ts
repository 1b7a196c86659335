// A thread's conversation survives a server restart: checkpoints live in PostgreSQL.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { startHangar } from '../../src/server.js';
import { startTestServer } from '../support/server.js';
import { createAgent, createThread, lastAiText, lastValues, run } from './support.js';

describe('restart', () => {
  it('continues a thread after the server is stopped and started again on the same database', async () => {
    const first = await startTestServer();
    const agentId = await createAgent(first);
    const threadId = await createThread(first, agentId);
    await run(first, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'before the restart' }] });
    await first.close();

    const config = loadConfig({
      flags: { port: 0, databaseUrl: first.databaseUrl, dataDir: first.dataDir },
      env: { HANGAR_BOOTSTRAP_API_KEY: first.adminKey, LOG_LEVEL: 'silent' },
    });
    const hangar = await startHangar(config, { logDestination: new Writable({ write: (_c, _e, done) => done() }), announce: () => {} });
    try {
      const again = { ...first, url: hangar.url, hangar };
      const { events } = await run(again, threadId, { agent_id: agentId, messages: [{ role: 'user', content: 'after the restart' }] });
      const values = lastValues(events);
      expect(lastAiText(values)).toBe('You said: after the restart');
      const humans = (values.messages as { type: string; content: string }[]).filter((m) => m.type === 'human').map((m) => m.content);
      expect(humans).toEqual(['before the restart', 'after the restart']);
    } finally {
      await hangar.close();
    }
  });
});
