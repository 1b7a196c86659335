// An impatient user presses Ctrl-C twice: `hangar serve` (embedded PostgreSQL) stops now instead of
// waiting out the drain timeout. The run it executes is handed back to the queue (not finished, not
// failed), the client's stream ends without an error, the embedded PostgreSQL is stopped (no
// orphan holds its directory) and the process exits 0. The second signal used to be ignored: the
// stop waited for the run to end (or the drain timeout, here ten minutes).
// Orderings only: the run is far from over when the process exits.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHangarClient } from '../../src/client/index.js';
import { collect, type SseEvent } from '../../src/client/stream.js';
import { spawnHangar, type RunningHangar } from '../support/cli.js';
import type { TestServer } from '../support/server.js';
import { createAgent, createThread, start } from '../runtime/support.js';

const dirs: string[] = [];
let child: RunningHangar | undefined;
afterAll(async () => {
  if (child && child.child.exitCode === null) {
    child.child.kill('SIGKILL');
    await child.exited;
  }
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('hangar serve, Ctrl-C twice', () => {
  it.each(['inline', 'thread'])('hands its run back, stops its embedded PostgreSQL and exits at once (executor %s)', async (executor) => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-twice-'));
    dirs.push(dataDir);
    const adminKey = `k_${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
    child = spawnHangar(['serve', '--port', '0', '--data-dir', dataDir], {
      HANGAR_BOOTSTRAP_API_KEY: adminKey,
      HANGAR_DRAIN_TIMEOUT_MS: '600000',
      HANGAR_EXECUTOR: executor,
      LOG_LEVEL: 'info',
    });
    const [, url] = await child.waitFor(/Hangar is listening on (\S+)/);
    const server = { url: url!, adminKey, client: createHangarClient({ baseUrl: url!, apiKey: adminKey }) } as TestServer;
    // About 20 s of tokens: far longer than it takes to stop.
    const config = await server.client.POST('/v1/deepagents/model-configs', { body: { name: 'slow', model_id: 'scripted:slow', parameters: { delay_ms: 500 } } });
    expect(config.response.status).toBe(201);
    const agentId = await createAgent(server, { runtime: { model: { model_id: 'slow' } } });
    const threadId = await createThread(server, agentId);
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    const stream = await start(server, threadId, { agent_id: agentId, messages: [{ role: 'user', content: words }], stream_mode: ['messages-tuple'] });
    expect(stream.status).toBe(200);
    const first: SseEvent[] = [];
    for (;;) {
      const next = await stream.events.next();
      if (next.done) throw new Error('the stream ended before a token');
      first.push(next.value);
      if (next.value.event === 'messages') break;
    }
    const reading = collect(stream);

    child.child.kill('SIGINT');
    await child.waitFor(/SIGINT: draining requests and stopping/);
    child.child.kill('SIGINT');
    expect(await child.exited).toBe(0);
    // Handed back unfinished, not completed by a drain that waited for it, not failed.
    expect(child.output()).toContain('run handed back to the queue');
    expect(child.output()).toContain('SIGINT again: handing runs back and stopping now');
    const events = await reading;
    expect(events.filter((e) => e.event === 'error')).toEqual([]);
    expect(events.filter((e) => e.event === 'messages').length).toBeLessThan(40);
    // The embedded PostgreSQL stopped cleanly (it removes its pid file), not left running.
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
    child = undefined;
  }, 120_000);
});
