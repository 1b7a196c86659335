// `npm run gen:client`: regenerate src/client/schema.ts from the routes.
import { writeFile } from 'node:fs/promises';
import { generateClientSchema } from '../src/client/generate.js';
import { VERSION } from '../src/server.js';

const target = new URL('../src/client/schema.ts', import.meta.url);
await writeFile(target, await generateClientSchema(VERSION));
console.log(`wrote ${target.pathname}`);
