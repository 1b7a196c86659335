// The Console's build: ui/ → dist/console/ (served by `hangar serve`). No dev server is needed to
// use it; `npm run build:console` runs at install (`prepare`).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  // React's automatic JSX runtime through esbuild; no Babel plugin needed for a production build.
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    chunkSizeWarningLimit: 800,
    // No inline modulepreload polyfill: the page's CSP allows scripts from this origin only.
    modulePreload: { polyfill: false },
    rollupOptions: {
      // Libraries' "use client" directives and misplaced /*@__PURE__*/ comments are harmless here.
      onwarn(warning, warn) {
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE' || warning.code === 'INVALID_ANNOTATION' || warning.code === 'SOURCEMAP_ERROR') return;
        warn(warning);
      },
    },
  },
  logLevel: 'warn',
});
