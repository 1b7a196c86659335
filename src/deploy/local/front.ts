// The front of a locally run deployment: one loopback port per deployment that forwards to the
// revision serving now, so the switch from one revision to the next happens in one place.
//
// A switch holds new requests, lets the requests in flight on the previous revision finish, stops
// it (it flushes the deployment's database as it exits), has the new revision load that database
// and take over writing it, then lets the held requests through to the new one. Nothing is refused
// during a rollout, and no request reaches a revision that has not seen the previous one's writes.
// (Node's http is enough for a byte-for-byte forward on loopback; a proxy library would add little.)
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppProcess } from './supervisor.js';

/** How long a switch waits for in-flight requests (long streams) before stopping the previous revision. */
const DRAIN_MS = 30_000;
/** How long a request waits for the serving process to come back after a crash. */
const WAIT_UP_MS = 20_000;

interface Target {
  app: AppProcess;
  agent: http.Agent;
  inflight: number;
  drained?: (() => void) | undefined;
}

/** One deployment's stable loopback port. */
export class Front {
  private target: Target | undefined;
  private gate: Promise<void> | undefined;
  private switching: Promise<unknown> = Promise.resolve();

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<Front> {
    const server = http.createServer();
    // Longer than any client's keep-alive, so the Hangar proxy never reuses a socket this side is closing.
    server.keepAliveTimeout = 65_000;
    const front = new Front(server);
    server.on('request', (req, res) => void front.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return front;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The process serving now. */
  get serving(): AppProcess | undefined {
    return this.target?.app;
  }

  /**
   * Make `app` the serving revision: hold new requests, drain and stop the previous one, run
   * `takeOver` (the new one loads the database), then release the held requests to `app`.
   * Returns the process that served before (already stopped), if any.
   *
   * When `takeOver` fails after the previous process was stopped, `restore` gets that process and
   * returns a running one in its place (the held requests go there), and the failure is thrown:
   * a rollout that fails half-way leaves the previous revision serving, never nothing.
   */
  switchTo(app: AppProcess, takeOver: () => Promise<void>, restore?: (previous: AppProcess) => Promise<AppProcess | undefined>): Promise<AppProcess | undefined> {
    const run = this.switching.then(async () => {
      const previous = this.target;
      if (previous?.app === app) return undefined;
      let open!: () => void;
      this.gate = new Promise((resolve) => (open = resolve));
      try {
        if (previous) {
          await this.drain(previous);
          this.target = undefined;
          previous.agent.destroy();
          await previous.app.stop();
        }
        try {
          await takeOver();
        } catch (error) {
          if (previous && restore) {
            const back = await restore(previous.app);
            if (back) this.target = { app: back, agent: new http.Agent({ keepAlive: true }), inflight: 0 };
          }
          throw error;
        }
        this.target = { app, agent: new http.Agent({ keepAlive: true }), inflight: 0 };
        return previous?.app;
      } finally {
        this.gate = undefined;
        open();
      }
    });
    this.switching = run.catch(() => {});
    return run;
  }

  /** Stop forwarding to `app` (it is being stopped). */
  forget(app: AppProcess): void {
    if (this.target?.app !== app) return;
    this.target.agent.destroy();
    this.target = undefined;
  }

  async close(): Promise<void> {
    this.target?.agent.destroy();
    this.target = undefined;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private drain(t: Target): Promise<void> {
    if (t.inflight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, DRAIN_MS);
      t.drained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    while (this.gate) await this.gate;
    const t = this.target;
    if (!t) {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: 'no revision of this deployment is serving on this host' }));
      return;
    }
    // Counted before any await, so a switch starting now waits for this request.
    t.inflight++;
    let finished = false;
    const done = () => {
      if (finished) return;
      finished = true;
      t.inflight--;
      if (t.inflight === 0) t.drained?.();
    };
    res.once('close', done);
    // Bodies are API calls (JSON): read whole, so a request can be sent again when a connection
    // turns out dead before the application saw it (a crash, a keep-alive socket it had closed).
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const headers = { ...req.headers };
    delete headers['transfer-encoding'];
    headers['content-length'] = String(body.length);
    for (let attempt = 1; ; attempt++) {
      await t.app.whenUp(WAIT_UP_MS);
      const outcome = await this.forward(t, req, headers, body, res);
      if (outcome === 'done') return;
      if (attempt >= 3 || res.headersSent) {
        if (!res.headersSent) {
          res.writeHead(502, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ detail: `the revision did not answer: ${outcome.message}` }));
        } else {
          res.destroy();
        }
        done();
        return;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** One attempt; 'done' once a response started, else the error (retried only when nothing reached the app). */
  private forward(t: Target, req: http.IncomingMessage, headers: http.OutgoingHttpHeaders, body: Buffer, res: http.ServerResponse): Promise<'done' | Error> {
    return new Promise((resolve) => {
      const upstream = http.request({ host: '127.0.0.1', port: t.app.port, method: req.method, path: req.url, headers, agent: t.agent }, (ures) => {
        res.writeHead(ures.statusCode ?? 502, ures.headers);
        ures.pipe(res);
        ures.once('error', () => res.destroy());
        resolve('done');
      });
      upstream.once('error', (error: NodeJS.ErrnoException) => {
        void (async () => {
          // Safe to send again: refused (nothing listening), or reset on a reused keep-alive socket
          // by a process that lives on (it had closed the idle socket; the request never reached a
          // handler). A process that died with the request in flight may have been executing it: a
          // run that crashed the application must not be sent to its restart (and crash it again).
          // A reset is answered only once the exit is seen (if it is one), so that requests sent
          // after the answer wait for the restart instead of reaching the dying process.
          const died = error.code === 'ECONNRESET' && (await t.app.exitsWithin(250));
          const retriable = error.code === 'ECONNREFUSED' || (error.code === 'ECONNRESET' && upstream.reusedSocket && !died);
          if (retriable) return resolve(error);
          if (!res.headersSent) {
            res.writeHead(502, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ detail: `the revision did not answer: ${error.message}` }));
          } else {
            res.destroy();
          }
          resolve('done');
        })();
      });
      res.once('close', () => {
        if (!res.writableFinished) upstream.destroy();
      });
      upstream.end(body);
    });
  }
}
