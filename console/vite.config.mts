/**
 * The console's build (`npm run build` → dist/console) and dev server (`npm run console:dev`, proxying the
 * API to a running service: SWITCHYARD_URL, default http://127.0.0.1:3000). docs/console.md.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));
const target = process.env['SWITCHYARD_URL'] ?? 'http://127.0.0.1:3000';

export default defineConfig({
  root: here('.'),
  // Only the console's own files: a .env of the project must not leak into the bundle.
  envDir: false,
  resolve: {
    // The client's TypeScript sources, as ES modules: the bundler keeps only what the console uses.
    alias: { '@switchyard/client/browser': here('../clients/typescript/src/browser.ts') },
  },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: here('../dist/console'),
    emptyOutDir: true,
    target: 'es2022',
    // Browsers the console supports all have <link rel=modulepreload>; no polyfill in the entry.
    modulePreload: { polyfill: false },
    sourcemap: true,
    reportCompressedSize: false,
  },
  server: {
    proxy: Object.fromEntries(
      ['/v1', '/console/session', '/healthz', '/readyz', '/docs'].map((prefix) => [
        prefix,
        { target, changeOrigin: false },
      ]),
    ),
  },
});
