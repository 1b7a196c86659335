#!/usr/bin/env node
// The `hangar` command: runs the compiled CLI (built by `npm run build`, which `npm ci` runs via `prepare`).
import('../dist/cli/main.js').catch((error) => {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/cli/main.js')) {
    console.error('hangar: the CLI is not built yet; run `npm run build` first.');
    process.exit(1);
  }
  throw error;
});
