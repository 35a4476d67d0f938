import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * Two pages from one build: the gateway console (`index.html`, served at `/console/`) and the
 * runtime console (`runtime.html`, served at the runtime's `/`). Asset URLs are relative and pages
 * route after `#`, so one build serves both mount points.
 */
export default defineConfig({
  root: here('.'),
  base: './',
  plugins: [preact()],
  build: {
    outDir: here('../dist/console'),
    emptyOutDir: true,
    sourcemap: true,
    chunkSizeWarningLimit: 1024,
    rollupOptions: { input: { index: here('index.html'), runtime: here('runtime.html') } },
  },
});
