/** Where the WAL stands: its last valid frame, and how many frames a checkpoint copied. */
export function readWalIndex(fd: number, buffer?: Buffer): { frames: number; copied: number };
export function walBytesOf(frames: number, pageSize: number): number;
