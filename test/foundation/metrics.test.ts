// Observability as an operator sees it: a Prometheus scrape of /metrics after a real run, /ok for
// liveness and /ready for readiness (database reachable, every migration applied).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, createThread, run } from '../runtime/support.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

/** Parse Prometheus text into `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

describe('GET /metrics', () => {
  it('shows the run it did, the requests that drove it, and every metric family', async () => {
    const agent = await createAgent(server);
    const thread = await createThread(server, agent);
    const { events } = await run(server, thread, { agent_id: agent, messages: [{ role: 'user', content: 'hello' }], stream_mode: ['values'] });
    expect(events.at(-1)?.event).not.toBe('error');

    const res = await fetch(`${server.url}/metrics`); // no key: scrapers are not API clients
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const m = samples(text);

    expect(m.get('hangar_runs{status="success"}')).toBe(1);
    expect(m.get('hangar_runs_finished_total{status="success"}')).toBe(1);
    expect(m.get('hangar_run_duration_seconds_count{status="success"}')).toBe(1);
    expect(m.get('hangar_run_queue_wait_seconds_count')).toBe(1);
    expect(m.get('hangar_run_queue_depth')).toBe(0);
    expect(m.get('hangar_run_queue_oldest_wait_seconds')).toBe(0);
    expect(m.get('hangar_event_log_write_lag_seconds_count')).toBeGreaterThan(0);
    // Requests by route pattern (never the raw path with its ids) and status, with latencies.
    expect(m.get('hangar_http_requests_total{method="POST",route="/v1/deepagents/agents",status="201"}')).toBe(1);
    expect(m.get('hangar_http_requests_total{method="POST",route="/v1/deepagents/threads/:thread_id/runs/stream",status="200"}')).toBe(1);
    expect(m.get('hangar_http_request_duration_seconds_count{method="POST",route="/v1/deepagents/agents",status="201"}')).toBe(1);
    expect(text).not.toContain(thread);
    // Families that have nothing to count yet are still declared.
    for (const family of ['hangar_deployments', 'hangar_notification_bus_reconnects_total', 'hangar_trace_exporter_dropped', 'process_cpu_user_seconds_total']) {
      expect(text).toContain(`# TYPE ${family} `);
    }

    // A 404 is counted under one label, not under the path asked for.
    await fetch(`${server.url}/no/such/path-${thread}`, { headers: { 'x-api-key': server.adminKey } });
    const after = samples(await (await fetch(`${server.url}/metrics`)).text());
    expect(after.get('hangar_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
  });
});

describe('GET /ok and GET /ready', () => {
  it('is live, and ready only while every migration is applied', async () => {
    expect((await fetch(`${server.url}/ok`)).status).toBe(200);
    const ready = await fetch(`${server.url}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, database: 'ok', pending_migrations: [] });

    // A database behind this build (a migration not applied): not ready, and the body says which.
    const client = new pg.Client({ connectionString: server.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ version: string }>('DELETE FROM hangar_migrations WHERE version = (SELECT max(version) FROM hangar_migrations) RETURNING version');
      const notReady = await fetch(`${server.url}/ready`);
      expect(notReady.status).toBe(503);
      expect(await notReady.json()).toEqual({ ready: false, database: 'ok', pending_migrations: [rows[0]!.version] });
      await client.query('INSERT INTO hangar_migrations (version) VALUES ($1)', [rows[0]!.version]);
    } finally {
      await client.end();
    }
    expect((await fetch(`${server.url}/ready`)).status).toBe(200);
  });
});
