import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import {
  listWorkspaceFolder,
  readWorkspaceFile,
  writeWorkspaceFile,
} from '../../../../shared/workspace/files.ts';
import { defineAction, definePlugin } from '../types.ts';

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
        const { content, bytes } = await readWorkspaceFile(ctx.workspace, given, MAX_FILE_BYTES);
        return { path: given, content, bytes };
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
        await writeWorkspaceFile(ctx.workspace, given, content);
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
        const entries = await listWorkspaceFolder(ctx.workspace, given);
        return {
          path: given ?? '.',
          entries: entries
            .map((e) => ({
              name: e.name,
              type: e.isDirectory() ? 'directory' : 'file',
              path: given === undefined ? e.name : join(given, e.name),
            }))
            .sort((a, b) => a.name.localeCompare(b.name)),
        };
      },
    }),
  ],
});
