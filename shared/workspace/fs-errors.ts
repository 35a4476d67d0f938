import { ApiError } from '../errors.ts';

/**
 * A file-system error met on a workspace path, as the client error it is; anything unexpected
 * (a full disk, an I/O error) is returned as it came.
 */
export function clientErrorOf(error: unknown, given: string, param: string): unknown {
  switch ((error as NodeJS.ErrnoException | null)?.code) {
    case 'ELOOP':
      // O_NOFOLLOW met a link that was put there after the walk.
      return new ApiError('path_outside_workspace', `${given} became a symbolic link; not followed`, {
        param,
      });
    case 'ENOENT':
    case 'ENOTDIR':
    case 'EINVAL':
      return new ApiError('not_found', `no ${given} in the workspace`, { param });
    case 'EEXIST':
      return new ApiError('conflict', `${given} already exists`, { param });
    case 'EISDIR':
      return new ApiError('conflict', `${given} is a folder`, { param });
    case 'ENXIO':
      // A FIFO nobody reads, or a device: opened non-blocking, refused.
      return new ApiError('conflict', `${given} is not a regular file`, { param });
    case 'EACCES':
    case 'EPERM':
      return new ApiError('forbidden', `${given}: permission denied`, { param });
    default:
      return error;
  }
}
