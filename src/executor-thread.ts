// The executor thread: with HANGAR_EXECUTOR=thread, a process of role `all` executes its runs on a
// worker thread of its own instead of the event loop that serves HTTP. The thread is a headless
// Hangar of role `worker` on the same database (the split that API-only and worker-only replicas
// already use: runs are claimed from the queue, events reach streams through the event log and the
// notification bus, cancels through the bus), so nothing new crosses between the two but log lines,
// metrics and the stop. A burst of requests then no longer waits behind executions for the event
// loop, and the process can use a second core.
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Config } from './config/index.js';
import type { Logger } from './logging.js';
import type { MetricsSnapshot } from './metrics.js';
import type { MirrorOp } from './runtime/events/hub.js';

/** What the main thread sends the executor thread. */
export type ToExecutor =
  | { type: 'stop' }
  /** Cut the stop's drain short (a second Ctrl-C): its runs are handed back now. */
  | { type: 'hurry' }
  | { type: 'metrics'; id: number }
  | { type: 'nudge'; what: 'deployments' | 'schedules' }
  /** A run was started here: the thread's workers claim it (or, all busy, tell other processes). */
  | { type: 'wake' }
  | { type: 'cancel'; runId: string };

/** What the executor thread sends back. */
export type FromExecutor =
  | { type: 'ready' }
  | { type: 'failed'; message: string; stack?: string | undefined }
  | { type: 'log'; line: string }
  | { type: 'events'; op: MirrorOp }
  | { type: 'metrics'; id: number; data: MetricsSnapshot }
  | { type: 'stopped' };

/** What the thread is started with. */
export interface ExecutorData {
  hangarExecutor: true;
  config: Config;
}

/** The executor thread as the main thread sees it. */
export interface ExecutorThread {
  /** Its Hangar metrics (summed into this process's scrape). */
  metrics(): Promise<MetricsSnapshot>;
  /** Something changed that its deployment reconciler or scheduler should look at now. */
  nudge(what: 'deployments' | 'schedules'): void;
  /** A run waits: the thread's workers claim it. */
  wake(): void;
  /** Stop `runId` if the thread executes it. */
  cancel(runId: string): void;
  /** Stop the thread at once, as a crash would (tests): it is started again, and its runs are retried once their leases expire. */
  kill(): Promise<void>;
  /** Let its runs drain (up to the drain timeout), close it and wait for it. */
  stop(): Promise<void>;
  /** Cut the drain of `stop` short: its runs still executing are handed back now. */
  hurry(): void;
}

/** A delay before an executor thread that died is started again. */
const RESTART_MS = 1_000;

/**
 * Start the executor thread for `config` (already holding the database URL) and wait until it
 * executes runs. A thread that dies later is logged and started again.
 */
export async function startExecutorThread(options: {
  config: Config;
  logger: Logger;
  writeLog: (line: string) => void;
  /** What the thread's event hub wrote (in order). */
  onEvents: (op: MirrorOp) => void;
  /** The thread is gone (what it was writing will not be told). */
  onLost: () => void;
}): Promise<ExecutorThread> {
  const { config, logger, writeLog, onEvents, onLost } = options;
  let worker: Worker;
  let stopping = false;
  let stopOnce: Promise<void> | undefined;
  let nextId = 0;
  const pending = new Map<number, (data: MetricsSnapshot) => void>();
  let onStopped: (() => void) | undefined;

  const spawn = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const data: ExecutorData = { hangarExecutor: true, config: { ...config, role: 'worker', executor: 'inline' } };
      let started = false;
      const w = newThread(data);
      worker = w;
      w.on('message', (message: FromExecutor) => {
        switch (message.type) {
          case 'log':
            writeLog(message.line);
            break;
          case 'events':
            onEvents(message.op);
            break;
          case 'ready':
            started = true;
            resolve();
            break;
          case 'failed':
            if (!started) reject(Object.assign(new Error(`the executor thread could not start: ${message.message}`), { stack: message.stack }));
            break;
          case 'metrics':
            pending.get(message.id)?.(message.data);
            pending.delete(message.id);
            break;
          case 'stopped':
            onStopped?.();
            break;
        }
      });
      w.on('error', (error) => {
        if (!started) reject(error);
        else logger.error({ err: error }, 'executor thread crashed');
      });
      w.on('exit', (code) => {
        onLost();
        for (const [id, answer] of pending) {
          answer([]);
          pending.delete(id);
        }
        if (!started) {
          reject(new Error(`the executor thread exited with code ${code} before it started`));
          return;
        }
        onStopped?.();
        if (stopping || worker !== w) return;
        // Its runs keep their leases until they expire; the new thread's sweep then retries them.
        logger.error({ code }, `executor thread exited; starting a new one in ${RESTART_MS} ms`);
        setTimeout(() => {
          if (!stopping) spawn().catch((error: unknown) => logger.error({ err: error }, 'executor thread could not be restarted'));
        }, RESTART_MS).unref();
      });
    });

  await spawn();
  logger.info({ worker_concurrency: config.workerConcurrency }, 'runs execute on an executor thread');
  return {
    metrics: () =>
      new Promise<MetricsSnapshot>((resolve) => {
        const id = nextId++;
        pending.set(id, resolve);
        worker.postMessage({ type: 'metrics', id } satisfies ToExecutor);
      }),
    kill: async () => {
      await worker.terminate();
    },
    nudge: (what) => worker.postMessage({ type: 'nudge', what } satisfies ToExecutor),
    wake: () => worker.postMessage({ type: 'wake' } satisfies ToExecutor),
    cancel: (runId) => worker.postMessage({ type: 'cancel', runId } satisfies ToExecutor),
    // Once: the server's close calls it at its start, its clean-up again.
    stop: () =>
      (stopOnce ??= (async () => {
        stopping = true;
        const stopped = new Promise<void>((resolve) => (onStopped = resolve));
        worker.postMessage({ type: 'stop' } satisfies ToExecutor);
        await stopped;
        await worker.terminate();
      })()),
    hurry: () => {
      if (stopOnce) worker.postMessage({ type: 'hurry' } satisfies ToExecutor);
    },
  };
}

/**
 * A thread running the entry module beside this one: the .js file when built; under tsx (development,
 * tests) the .ts file, after registering tsx's loader in the thread (a thread does not inherit the
 * loader hooks of its parent).
 */
function newThread(data: ExecutorData): Worker {
  const ext = path.extname(fileURLToPath(import.meta.url));
  const entry = new URL(`./executor-entry${ext}`, import.meta.url);
  const options = { workerData: data, name: 'hangar-executor' };
  if (ext !== '.ts') return new Worker(entry, options);
  // tsx's ESM API (its package exports map `tsx/esm/api` to this file for import).
  const tsx = new URL('./dist/esm/api/index.mjs', pathToFileURL(createRequire(import.meta.url).resolve('tsx/package.json'))).href;
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(boot, { ...options, eval: true });
}
