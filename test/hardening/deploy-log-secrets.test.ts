// A deployment's secrets are masked (`********`) wherever the API shows the deployment, but the
// application gets them in its environment and may print them: its deploy log (which viewers read)
// shows `[redacted]` in their place, also when it is printed in two pieces, with other output (its
// other stream) between the pieces, with a colour code inside it, or cut inside a character.
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall } from '../deployments/api.js';
import { waitFor } from '../deployments/git-fixture.js';
import { startTestServer, type TestServer } from '../support/server.js';

const SECRET = 'deploy-value-5c2e8a1f7b';
// Not ASCII: 'ä' is two bytes in UTF-8.
const PASSWORD = 'pässwort-7d1e9c40';
let server: TestServer;

const CHATTY = `import { Annotation, StateGraph, START, END } from '@langchain/langgraph';
console.log('starting with API_KEY=' + process.env.API_KEY);
// The same value in two writes, apart (nothing else of this thread is written in between): two
// pieces of output for Hangar.
process.stdout.write('split: ' + process.env.API_KEY.slice(0, 9));
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
process.stdout.write(process.env.API_KEY.slice(9) + ' end\\n');
const pause = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
// Its other stream writes between the two halves.
process.stdout.write('inter: ' + process.env.API_KEY.slice(0, 9));
pause();
process.stderr.write('noise\\n');
pause();
process.stdout.write(process.env.API_KEY.slice(9) + ' end2\\n');
pause();
// A colour code inside the value (codes are removed from the log).
process.stdout.write('colour: ' + process.env.API_KEY.slice(0, 9) + '\\x1b[1m' + process.env.API_KEY.slice(9) + '\\x1b[0m end3\\n');
pause();
// A colour code cut in two pieces.
process.stdout.write('code: \\x1b[3');
pause();
process.stdout.write('1mred\\x1b[0m end4\\n');
pause();
// The password's bytes in two pieces, cut inside its 'ä'.
const bytes = Buffer.from('password: ' + process.env.PASSWORD + ' end5\\n');
const cut = bytes.indexOf(0xc3) + 1;
process.stdout.write(bytes.subarray(0, cut));
pause();
process.stdout.write(bytes.subarray(cut));
const S = Annotation.Root({ text: Annotation() });
export const graph = new StateGraph(S).addNode('n', (s) => ({ text: s.text })).addEdge(START, 'n').addEdge('n', END).compile();
`;

beforeAll(async () => {
  server = await startTestServer({ env: { HANGAR_DEPLOY_POLL_MS: '300', LOG_LEVEL: 'warn' } });
});
afterAll(async () => {
  await server?.close();
});

const api = (method: string, p: string, body?: unknown, type?: string) => apiCall(server, method, p, body, type);

async function upload(graph = CHATTY): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-log-secrets-'));
  const app = path.join(dir, 'app');
  await mkdir(app);
  await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'chatty', type: 'module' }));
  await writeFile(path.join(app, 'langgraph.json'), JSON.stringify({ graphs: { echo: './graph.mjs:graph' } }));
  await writeFile(path.join(app, 'graph.mjs'), graph);
  const file = path.join(dir, 'app.tar.gz');
  await tar.c({ gzip: true, file, cwd: dir }, ['app']);
  const u = await api('POST', '/v2/deployments/uploads');
  expect((await api('PUT', u.body.upload_url, await readFile(file), 'application/gzip')).status).toBe(200);
  return u.body.source_tarball_path as string;
}

describe('a deployment printing its secret', () => {
  it('has it redacted in its deploy log, for everyone', { timeout: 180_000 }, async () => {
    const created = await api('POST', '/v2/deployments', {
      name: 'chatty',
      source: 'internal_source',
      source_config: {},
      source_revision_config: { source_tarball_path: await upload() },
      secrets: [
        { name: 'API_KEY', value: SECRET },
        { name: 'PASSWORD', value: PASSWORD },
      ],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const rev = created.body.latest_revision_id as string;
    const status = await waitFor('the revision to settle', async () => {
      const s = (await api('GET', `/v2/deployments/${id}/revisions/${rev}`)).body.status as string;
      return ['DEPLOYED', 'BUILD_FAILED', 'DEPLOY_FAILED'].includes(s) ? s : undefined;
    });
    expect(status).toBe('DEPLOYED');
    const viewer = await server.createKey({ role: 'viewer' });
    const logs = async () => ((await (await fetch(`${server.url}/v2/deployments/${id}/revisions/${rev}/deploy-logs`, { headers: { 'X-Api-Key': viewer } })).json()) as { logs: string }).logs;
    const text = await waitFor('the last write to reach the log', async () => ((await logs()).includes(' end5') ? logs() : undefined));
    expect(text).toContain('starting with API_KEY=[redacted]');
    // Written in two pieces, redacted as one.
    expect(text).toContain('split: [redacted] end');
    // Its stderr between the two halves: the halves are still one.
    expect.soft(text).toContain('noise');
    expect.soft(text).toContain('[redacted] end2');
    expect.soft(text).toContain('colour: [redacted] end3');
    expect.soft(text).toContain('code: red end4');
    expect.soft(text).toContain('password: [redacted] end5');
    expect.soft(text).not.toContain(SECRET);
    expect.soft(text).not.toContain(SECRET.slice(0, 9));
    expect.soft(text).not.toContain(SECRET.slice(9));
    expect.soft(text).not.toContain('sswort-7d1e9c40');
    expect.soft(text).not.toContain('\u001b');
  });
});

describe('a deployment failing with its secret in the reason', () => {
  it('has it redacted in the revision\'s status_message too', { timeout: 180_000 }, async () => {
    // The application answers the take-over of its database with a failure that quotes its key.
    const graph = `import { Annotation, StateGraph, START, END } from '@langchain/langgraph';
process.on('message', (m) => { if (m && m.type === 'activate') process.send({ type: 'activate-failed', error: 'bad key ' + process.env.API_KEY }); });
const S = Annotation.Root({ text: Annotation() });
export const graph = new StateGraph(S).addNode('n', (s) => ({ text: s.text })).addEdge(START, 'n').addEdge('n', END).compile();
`;
    const created = await api('POST', '/v2/deployments', {
      name: 'quoting',
      source: 'internal_source',
      source_config: {},
      source_revision_config: { source_tarball_path: await upload(graph) },
      secrets: [{ name: 'API_KEY', value: SECRET }],
    });
    expect(created.status).toBe(201);
    const rev = await waitFor('the revision to fail', async () => {
      const r = (await api('GET', `/v2/deployments/${created.body.id}/revisions/${created.body.latest_revision_id}`)).body;
      return ['DEPLOYED', 'BUILD_FAILED', 'DEPLOY_FAILED'].includes(r.status) ? r : undefined;
    });
    expect(rev.status).toBe('DEPLOY_FAILED');
    expect(rev.status_message).toBe('the application could not load its database: bad key [redacted]');
  });
});
