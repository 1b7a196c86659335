// The executor thread's entry (see executor-thread.ts): a headless Hangar of role `worker` whose log
// lines, metrics and stop go through the port to the main thread.
import { Writable } from 'node:stream';
import { parentPort, workerData } from 'node:worker_threads';
import type { ExecutorData, FromExecutor, ToExecutor } from './executor-thread.js';
import { startHangar } from './server.js';

const port = parentPort;
const data = workerData as ExecutorData | undefined;
if (!port || !data?.hangarExecutor) throw new Error('executor-entry runs only as the executor thread of a Hangar server');

const send = (message: FromExecutor) => port.postMessage(message);
const logDestination = new Writable({
  write(chunk, _encoding, done) {
    send({ type: 'log', line: String(chunk) });
    done();
  },
});

try {
  const hangar = await startHangar(data.config, { logDestination, headless: true, mirrorEvents: (op) => send({ type: 'events', op }) });
  port.on('message', (message: ToExecutor) => {
    if (message.type === 'metrics') {
      hangar.metrics.snapshot().then(
        (snapshot) => send({ type: 'metrics', id: message.id, data: snapshot }),
        () => send({ type: 'metrics', id: message.id, data: [] }),
      );
    } else if (message.type === 'wake') {
      void hangar.runtime.queue.announce();
    } else if (message.type === 'cancel') {
      hangar.runtime.queue.cancelHere(message.runId);
    } else if (message.type === 'nudge') {
      // The main thread's services hold no reconciler or scheduler: it forwards their nudges here.
      if (message.what === 'deployments') hangar.services.deployments.wakeReconciler();
      else hangar.services.schedules.nudge();
    } else if (message.type === 'stop') {
      void hangar.close().finally(() => send({ type: 'stopped' }));
    } else if (message.type === 'hurry') {
      hangar.hurry();
    }
  });
  send({ type: 'ready' });
} catch (error) {
  const e = error instanceof Error ? error : new Error(String(error));
  send({ type: 'failed', message: e.message, stack: e.stack });
}
