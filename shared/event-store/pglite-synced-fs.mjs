// PGlite's Node file system with fsync that reaches the disk. Plain JavaScript: the PGlite worker
// imports it and runs without a TypeScript loader.
import { fdatasyncSync, fsyncSync } from 'node:fs';
import { NodeFS } from '@electric-sql/pglite/nodefs';

/**
 * A file's data (and the size needed to read it back) with `fdatasync`, as PostgreSQL syncs its WAL
 * on Linux; a folder's entries with `fsync`, as PostgreSQL syncs folders.
 */
const syncOnHost = (fd, isFolder) => (isFolder ? fsyncSync : fdatasyncSync)(fd);

/**
 * PGlite on Node stores its files through Emscripten's NODEFS, which has no fsync: PostgreSQL's
 * `fsync()` returns success without a system call (and `fdatasync()` does nothing at all), so a
 * commit reached the operating system's cache, never the disk. That survives a killed process, not
 * a power cut or a kernel crash. This file system gives NODEFS the missing call, so with
 * `fsync=on` and `wal_sync_method=fsync` (the only method that reaches it) a commit returns once
 * its WAL is on disk, and checkpoints and crash recovery sync the data files as PostgreSQL does
 * elsewhere. `sync(fd, isFolder)` is the host call, replaceable in tests.
 */
export class SyncedNodeFS extends NodeFS {
  #sync;

  constructor(dataDir, sync = syncOnHost) {
    super(dataDir);
    this.#sync = sync;
  }

  async init(pg, opts) {
    const { emscriptenOpts } = await super.init(pg, opts);
    // Before the mount and PostgreSQL's start, so that crash recovery's syncs are real too.
    // NODEFS's stream operations are one object shared by every file and folder it opens.
    const giveFsync = (mod) => {
      const { FS, NODEFS } = mod;
      // Emscripten returns the operation's answer to PostgreSQL: 0 is success; a host failure becomes its errno.
      NODEFS.stream_ops.fsync = (stream) =>
        NODEFS.tryFSOperation(() => {
          this.#sync(stream.nfd, FS.isDir(stream.node.mode));
          return 0;
        });
    };
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [giveFsync, ...(emscriptenOpts.preRun ?? [])] } };
  }
}
