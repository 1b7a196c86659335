// The front of a local deployment with a real supervised child process: a request that crashes the
// application is answered 502 and not sent again to its restart; a request refused while the process
// is down waits for the restart and goes through.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Front } from './front.js';
import { AppProcess } from './supervisor.js';

/** A tiny HTTP application: GET /ok answers; POST /crash notes the request in a file, then exits without answering. */
const APP = `
const http = require('node:http');
const fs = require('node:fs');
http.createServer((req, res) => {
  if (req.url === '/crash') { fs.appendFileSync(process.env.HITS, 'crash\\n'); process.exit(1); }
  if (req.url === '/hit') fs.appendFileSync(process.env.HITS, 'hit\\n');
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{"ok":true}');
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function start(): Promise<{ front: Front; app: AppProcess; hits: () => Promise<string[]> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-front-'));
  const file = path.join(dir, 'hits');
  const port = await new Promise<number>((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (srv.address() as { port: number }).port;
      srv.close(() => resolve(p));
    });
  });
  const app = new AppProcess({ args: ['-e', APP], cwd: dir, env: { ...process.env, PORT: String(port), HITS: file }, port, output: () => ({ write() {}, end() {} }) });
  await app.startHealthy(20_000, new AbortController().signal);
  const front = await Front.start();
  await front.switchTo(app, async () => {});
  cleanup.push(async () => {
    await front.close();
    await app.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const hits = async () => (await readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  return { front, app, hits };
}

describe('local deployment front', () => {
  it('does not send a request that crashed the application to its restart', { timeout: 30_000 }, async () => {
    const { front, app, hits } = await start();
    // A kept-alive connection first, so the crash request travels on a reused socket (the case the
    // front retries when the application had only closed an idle connection).
    expect((await fetch(`${front.url}/ok`)).status).toBe(200);
    const crashed = await fetch(`${front.url}/crash`, { method: 'POST', body: '{}' });
    expect(crashed.status).toBe(502);
    expect(await crashed.json()).toMatchObject({ detail: expect.stringContaining('the revision did not answer') });
    // The supervisor restarts it; the crash request was executed once, not replayed.
    await app.whenUp(15_000);
    expect((await fetch(`${front.url}/hit`)).status).toBe(200);
    expect(app.restarts).toBe(1);
    expect(await hits()).toEqual(['crash', 'hit']);
  });

  it('holds a request while the application restarts after a crash, then forwards it', { timeout: 30_000 }, async () => {
    const { front, app, hits } = await start();
    await fetch(`${front.url}/crash`, { method: 'POST', body: '{}' });
    // Sent while the process is down: held until the restart answers, then forwarded once.
    const held = await fetch(`${front.url}/hit`);
    expect(held.status).toBe(200);
    expect(app.restarts).toBe(1);
    expect(await hits()).toEqual(['crash', 'hit']);
  });
});
