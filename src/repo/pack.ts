// Git's wire pieces for read-only smart HTTP: pkt-lines and version-2 pack files without deltas.
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import type { GitObject } from './objects.js';

const PACK_TYPE = { commit: 1, tree: 2, blob: 3 } as const;

/** One pkt-line: four hex digits of length (including themselves), then the payload. */
export function pktLine(payload: string | Buffer): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0'), 'ascii'), body]);
}

/** The flush packet that ends a section. */
export const FLUSH = Buffer.from('0000', 'ascii');

/** A request body that does not follow git's pkt-line framing or upload-pack grammar. */
export class GitProtocolError extends Error {
  override name = 'GitProtocolError';
}

/** The payloads of a pkt-line stream; a flush packet is `null`. */
export function parsePktLines(data: Buffer): (string | null)[] {
  const lines: (string | null)[] = [];
  let i = 0;
  while (i + 4 <= data.length) {
    const prefix = data.toString('ascii', i, i + 4);
    if (!/^[0-9a-f]{4}$/i.test(prefix)) throw new GitProtocolError(`malformed pkt-line length "${prefix.replace(/[^\x20-\x7e]/g, '?')}"`);
    const len = Number.parseInt(prefix, 16);
    if (len === 0 || len === 1 || len === 2) {
      // 0000 flush, 0001 delim, 0002 response-end (protocol v2): all section ends for us.
      lines.push(null);
      i += 4;
      continue;
    }
    if (len < 4 || i + len > data.length) throw new GitProtocolError('malformed pkt-line: the length runs past the end of the body');
    lines.push(data.toString('utf8', i + 4, i + len));
    i += len;
  }
  if (i !== data.length) throw new GitProtocolError('malformed pkt-line: trailing bytes after the last line');
  return lines;
}

/** A pack file holding `objects` whole (no deltas): valid for any git client, if not the smallest. */
export function buildPack(objects: GitObject[]): Buffer {
  const header = Buffer.alloc(12);
  header.write('PACK', 0, 'ascii');
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(objects.length, 8);
  const parts: Buffer[] = [header];
  for (const o of objects) {
    parts.push(objectHeader(PACK_TYPE[o.type], o.body.length), deflateSync(o.body));
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, createHash('sha1').update(body).digest()]);
}

/** Type and size, as a little-endian base-128 number with the type in bits 4–6 of the first byte. */
function objectHeader(type: number, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (type << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}
