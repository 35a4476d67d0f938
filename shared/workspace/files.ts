import { constants, type Dirent } from 'node:fs';
import { type FileHandle, lstat, open, readdir } from 'node:fs/promises';
import { ApiError } from '../errors.ts';
import { clientErrorOf } from './fs-errors.ts';
import { type ResolveOptions, resolveInWorkspace } from './resolve.ts';

// Undefined on Windows, where there is nothing to add.
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
// A FIFO must not hang the request: opened non-blocking, it is then refused as not a regular file.
const NON_BLOCKING = constants.O_NONBLOCK ?? 0;

async function openResolved(path: string, flags: number, given: string, param: string): Promise<FileHandle> {
  try {
    return await open(path, flags | NO_FOLLOW | NON_BLOCKING, 0o666);
  } catch (error) {
    throw clientErrorOf(error, given, param);
  }
}

/** A regular file of the workspace, read without following a link at the last step. */
export async function readWorkspaceFile(
  workspace: string,
  given: string,
  maxBytes: number,
): Promise<{ content: string; bytes: number }> {
  const param = 'path';
  const path = await resolveInWorkspace(workspace, given, { param });
  const handle = await openResolved(path, constants.O_RDONLY, given, param);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new ApiError('not_found', `no file ${given} in the workspace`, { param });
    if (info.size > maxBytes)
      throw new ApiError('payload_too_large', `${given} is larger than ${maxBytes} bytes`);
    return { content: await handle.readFile('utf8'), bytes: info.size };
  } finally {
    await handle.close();
  }
}

export interface WriteOptions extends ResolveOptions {
  /** Refuse to replace a file that already exists (O_EXCL). */
  exclusive?: boolean;
}

/** Writes a regular file of the workspace, creating missing folders one at a time; never through a link out. */
export async function writeWorkspaceFile(
  workspace: string,
  given: string,
  content: string | Uint8Array,
  options: WriteOptions = {},
): Promise<void> {
  const param = options.param ?? 'path';
  const path = await resolveInWorkspace(workspace, given, { param, createParents: true });
  const flags = constants.O_WRONLY | constants.O_CREAT | (options.exclusive ? constants.O_EXCL : 0);
  const handle = await openResolved(path, flags, given, param);
  try {
    // Truncate only once it is known to be a regular file (not a FIFO or a device).
    if (!(await handle.stat()).isFile())
      throw new ApiError('conflict', `${given} is not a regular file`, { param });
    await handle.truncate(0);
    await handle.writeFile(content, typeof content === 'string' ? 'utf8' : undefined);
  } finally {
    await handle.close();
  }
}

/**
 * The entries of a workspace folder (the root when `given` is undefined).
 * readdir cannot refuse links by itself: the folder is checked with lstat just before it.
 */
export async function listWorkspaceFolder(workspace: string, given: string | undefined): Promise<Dirent[]> {
  const param = 'path';
  const folder = await resolveInWorkspace(workspace, given ?? '.', { param });
  const notFolder = () => new ApiError('not_found', `no folder ${given ?? '.'} in the workspace`, { param });
  const info = await lstat(folder).catch(() => undefined);
  if (!info?.isDirectory()) throw notFolder();
  return readdir(folder, { withFileTypes: true }).catch((error: unknown) => {
    throw clientErrorOf(error, given ?? '.', param);
  });
}
