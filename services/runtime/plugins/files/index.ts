import { mkdir, readdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { z } from 'zod';
import { ApiError } from '../../../../shared/errors.ts';
import { defineAction, definePlugin } from '../types.ts';
import { resolveInside } from './sandbox.ts';

const MAX_FILE_BYTES = 1024 * 1024;
const path = z.string().min(1).max(1000);

/** Read, write and list files inside the runtime's workspace, and nothing outside it. */
export const filesPlugin = definePlugin({
  name: 'files',
  version: '1.0.0',
  description: "Read, write and list files in the runtime's workspace",
  requires: { env: [], bins: [] },
  system: () =>
    'You can read, write and list files in the workspace with the files__* tools. Paths are relative to the workspace.',
  async start(ctx) {
    await mkdir(ctx.workspace, { recursive: true });
  },
  actions: [
    defineAction({
      name: 'read',
      description: 'Read a UTF-8 text file of the workspace',
      input: z.strictObject({ path }),
      supportsCommand: true,
      supportsApi: true,
      apiMethod: 'POST',
      apiPath: '/api/files/read',
      async handler({ path: given }, ctx) {
        const file = await resolveInside(ctx.workspace, given);
        const info = await stat(file).catch(() => undefined);
        if (!info?.isFile())
          throw new ApiError('not_found', `no file ${given} in the workspace`, { param: 'path' });
        if (info.size > MAX_FILE_BYTES)
          throw new ApiError('payload_too_large', `${given} is larger than 1 MiB`);
        return { path: given, content: await readFile(file, 'utf8'), bytes: info.size };
      },
    }),
    defineAction({
      name: 'write',
      description: 'Write a UTF-8 text file in the workspace (creating folders as needed)',
      input: z.strictObject({ path, content: z.string().max(MAX_FILE_BYTES) }),
      supportsCommand: true,
      supportsApi: true,
      apiMethod: 'POST',
      apiPath: '/api/files/write',
      async handler({ path: given, content }, ctx) {
        const file = await resolveInside(ctx.workspace, given);
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, content, 'utf8');
        return { path: given, bytes: Buffer.byteLength(content) };
      },
    }),
    defineAction({
      name: 'list',
      description: 'List the files and folders of a workspace folder (the root when no path is given)',
      input: z.strictObject({ path: path.optional() }),
      supportsCommand: true,
      supportsApi: true,
      apiMethod: 'POST',
      apiPath: '/api/files/list',
      async handler({ path: given }, ctx) {
        const root = await realpath(ctx.workspace);
        const dir = given === undefined ? root : await resolveInside(ctx.workspace, given);
        const entries = await readdir(dir, { withFileTypes: true }).catch(() => {
          throw new ApiError('not_found', `no folder ${given ?? '.'} in the workspace`, { param: 'path' });
        });
        return {
          path: given ?? '.',
          entries: entries
            .map((e) => ({
              name: e.name,
              type: e.isDirectory() ? 'directory' : 'file',
              path: relative(root, join(dir, e.name)),
            }))
            .sort((a, b) => a.name.localeCompare(b.name)),
        };
      },
    }),
  ],
});
