import { NodeFS } from '@electric-sql/pglite/nodefs';

/** PGlite's Node file system with fsync that reaches the disk (see `pglite-synced-fs.mjs`). */
export declare class SyncedNodeFS extends NodeFS {
  constructor(dataDir: string, sync?: (fd: number, isFolder: boolean) => void);
}
