// Keep-alive connections across a stop. `server.close()` stops taking connections and closes the idle
// ones, but a connection whose response was still being written becomes idle later, and Node keeps it
// open until its keep-alive timeout (5 s) ends it: the stop waited that long after its last answer.
import type { Server, ServerResponse } from 'node:http';

/**
 * Follow the server's responses; the returned function, called as the server stops, closes every
 * idle connection and makes each response from then on the last of its connection: one not sent yet
 * says `Connection: close` (Node closes the connection once it is sent); one already being sent (a
 * stream) has its connection closed when it ends.
 */
export function closeConnectionsOnStop(server: Server): () => void {
  const open = new Set<ServerResponse>();
  let stopping = false;
  const last = (res: ServerResponse) => {
    if (!res.headersSent) res.setHeader('connection', 'close');
    // Node lets go of the connection first (its own `finish` listener came earlier): it is idle now.
    else res.once('finish', () => server.closeIdleConnections());
  };
  // Before the app's own listener, which may write the answer at once.
  server.prependListener('request', (_req, res) => {
    if (stopping) return last(res);
    open.add(res);
    res.once('close', () => open.delete(res));
  });
  return () => {
    stopping = true;
    for (const res of open) last(res);
    open.clear();
    server.closeIdleConnections();
  };
}
