// Calling the deployments API of a test server as its admin, with the answer's status and parsed body.
import type { TestServer } from '../support/server.js';

/** `method p` with `body` (JSON, or a Buffer sent as `type`); the status and the parsed body (null when empty). */
export async function apiCall(server: TestServer, method: string, p: string, body?: unknown, type = 'application/json'): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${p}`, {
    method,
    headers: { 'X-Api-Key': server.adminKey, 'Content-Type': type },
    ...(body === undefined ? {} : { body: body instanceof Buffer ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
