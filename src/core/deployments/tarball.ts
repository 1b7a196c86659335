// What an uploaded source tarball holds, read without writing anything: its entries are counted and
// their sizes added up as the gzip stream is read, and reading stops as soon as a limit is passed, so
// a small upload that expands to gigabytes (a gzip bomb) is refused after reading only the first of them.
import { Readable } from 'node:stream';
import * as tar from 'tar';

/** The most a source tarball may expand to (the files it holds, added up). */
export const TARBALL_MAX_BYTES = 256 * 1024 * 1024;
/** The most entries (files, directories, links) a source tarball may hold. */
export const TARBALL_MAX_ENTRIES = 50_000;

/** A tarball that cannot be used, and why (the words are the user's to read). */
export class TarballRefused extends Error {
  override name = 'TarballRefused';
}

export interface TarballSummary {
  entries: number;
  bytes: number;
  /** 1 when every entry sits under one top directory (stripped when unpacking), else 0. */
  commonPrefixDepth: number;
}

/** Read `content` (a .tar.gz) through; throws TarballRefused past a limit or when it is not a tarball. */
export async function summarizeTarball(
  content: Buffer,
  limits: { maxBytes?: number; maxEntries?: number } = {},
): Promise<TarballSummary> {
  const maxBytes = limits.maxBytes ?? TARBALL_MAX_BYTES;
  const maxEntries = limits.maxEntries ?? TARBALL_MAX_ENTRIES;
  const tops = new Set<string>();
  let topLevelFile = false;
  let entries = 0;
  let bytes = 0;
  const source = Readable.from([content]);
  await new Promise<void>((resolve, reject) => {
    let done = false;
    const fail = (error: Error) => {
      if (done) return;
      done = true;
      source.destroy();
      reject(error);
    };
    const parser = new tar.Parser({
      onReadEntry: (entry) => {
        entries++;
        bytes += entry.size ?? 0;
        if (entries > maxEntries) return fail(new TarballRefused(`the tarball holds more than ${maxEntries} entries`));
        if (bytes > maxBytes) return fail(new TarballRefused(`the tarball expands to more than ${Math.round(maxBytes / 1024 / 1024)} MiB`));
        const parts = entry.path.replace(/^\.\//, '').split('/').filter(Boolean);
        if (parts.length > 0) {
          tops.add(parts[0]!);
          if (parts.length === 1 && entry.type !== 'Directory') topLevelFile = true;
        }
        entry.resume();
      },
    });
    parser.on('error', (error: Error) => fail(new TarballRefused(`not a readable .tar.gz: ${error.message}`)));
    parser.on('end', () => {
      if (done) return;
      done = true;
      resolve();
    });
    source.on('error', (error) => fail(error));
    source.pipe(parser as unknown as NodeJS.WritableStream);
  });
  return { entries, bytes, commonPrefixDepth: tops.size === 1 && !topLevelFile ? 1 : 0 };
}
