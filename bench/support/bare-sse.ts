// The floor of `bench:load`'s burst: a bare node:http server that answers every POST the way a run
// stream starts — it reads and parses the JSON body, sends 200 with `text/event-stream` and a
// `metadata` event at once — then sends `BARE_EVENTS` more events `BARE_DELAY_MS` apart and ends. No
// database, no framework, no agent: what the same client, kernel and machine cost for the same burst.
// It listens with Hangar's accept backlog (4096; BARE_BACKLOG): with Node's default of 511 the kernel
// drops handshakes of a 1,000-connection burst, and those clients wait a 1 s SYN retry.
// Prints `BARE_URL <url>` when listening.
import { randomUUID } from 'node:crypto';
import http from 'node:http';

const EVENTS = Number(process.env.BARE_EVENTS ?? 5);
const DELAY_MS = Number(process.env.BARE_DELAY_MS ?? 20);

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    try {
      JSON.parse(Buffer.concat(chunks).toString() || '{}');
    } catch {
      res.writeHead(422).end();
      return;
    }
    const runId = randomUUID();
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    res.write(`event: metadata\ndata: ${JSON.stringify({ run_id: runId, attempt: 1, status: 'pending', queue_position: 0 })}\nid: 1\n\n`);
    let sent = 0;
    const timer = setInterval(() => {
      sent++;
      res.write(`event: values\ndata: ${JSON.stringify({ messages: [{ type: 'ai', content: `event ${sent}` }] })}\nid: ${sent + 1}\n\n`);
      if (sent >= EVENTS) {
        clearInterval(timer);
        res.end();
      }
    }, DELAY_MS);
    res.on('close', () => clearInterval(timer));
  });
});
server.listen({ port: 0, host: '127.0.0.1', backlog: Number(process.env.BARE_BACKLOG ?? 4096) }, () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`BARE_URL http://127.0.0.1:${port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
