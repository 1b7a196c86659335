// The read-only half of git's smart HTTP protocol (version 0): the ref advertisement and upload-pack.
// One branch, `main`, whose tip is the agent's head; a fetch always receives every object of the
// history, which keeps the server stateless and is cheap for agent-sized repositories.
import { buildPack, FLUSH, GitProtocolError, parsePktLines, pktLine } from './pack.js';
import type { GitObject } from './objects.js';

/** The branch agent repositories expose. */
export const BRANCH = 'refs/heads/main';

const CAPABILITIES = `symref=HEAD:${BRANCH} no-progress agent=hangar`;

/** Body of `GET info/refs?service=git-upload-pack`. */
export function advertiseRefs(head: string): Buffer {
  return Buffer.concat([
    pktLine('# service=git-upload-pack\n'),
    FLUSH,
    pktLine(`${head} HEAD\0${CAPABILITIES}\n`),
    pktLine(`${head} ${BRANCH}\n`),
    FLUSH,
  ]);
}

/** What a client asked for in an upload-pack request. */
export interface UploadRequest {
  wants: string[];
  haves: string[];
  done: boolean;
}

/** Parse the body of `POST git-upload-pack`. */
export function parseUploadRequest(body: Buffer): UploadRequest {
  const request: UploadRequest = { wants: [], haves: [], done: false };
  for (const line of parsePktLines(body)) {
    if (line === null) continue;
    const text = line.trimEnd();
    if (text.startsWith('want ') || text.startsWith('have ')) {
      const id = text.slice(5, 45);
      if (!/^[0-9a-f]{40}$/.test(id)) throw new GitProtocolError(`"${text.slice(0, 4)}" needs a 40-character object id`);
      (text.startsWith('want ') ? request.wants : request.haves).push(id);
    } else if (text === 'done') request.done = true;
  }
  if (request.wants.length === 0) throw new GitProtocolError('the request wants no object');
  return request;
}

/**
 * The response to an upload-pack request: NAK (no common commits are negotiated), then, once the
 * client says `done`, a pack of `objects`. Before `done` the client is still negotiating and gets
 * only the NAK, after which it sends `done`.
 */
export function uploadPackResponse(request: UploadRequest, objects: () => Promise<GitObject[]>): Promise<Buffer> {
  const nak = pktLine('NAK\n');
  if (!request.done) return Promise.resolve(nak);
  return objects().then((all) => Buffer.concat([nak, buildPack(all)]));
}
