// Starts @langchain/langgraph-api 1.5.1 on a free port with the benchmark graph, prints its URL.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '@langchain/langgraph-api/server';

const cwd = path.dirname(fileURLToPath(import.meta.url));
const { host, cleanup } = await startServer({
  port: 0,
  host: '127.0.0.1',
  nWorkers: Number(process.env.PEER_WORKERS ?? 32),
  cwd,
  graphs: { agent: './graph.ts:graph', slow: './graph.ts:slow' },
});
process.stdout.write(`PEER_URL http://${host}\n`);
process.on('SIGTERM', () => void cleanup().finally(() => process.exit(0)));
