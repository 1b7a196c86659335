// The package version, in a module of its own so that `hangar --help` and the client commands can
// print it without loading the server.
import { readFileSync } from 'node:fs';

/** The version in package.json. */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
