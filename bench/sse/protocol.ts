/** What bench/sse/index.ts and its server child (bench/sse/server.ts) say to each other over IPC. */

/** Wall-clock milliseconds with sub-millisecond resolution; both processes read the same clock. */
export const now = () => performance.timeOrigin + performance.now();

/** The payload every benchmark event carries, JSON-encoded in `UpdateSystem.system`. */
export interface Stamp {
  bench: 1;
  /** Which run the event belongs to (a phase of the benchmark, or a sync marker). */
  tag: string;
  seq: number;
  /** When the open-loop schedule meant to append it. */
  sched: number;
  /** Taken in the server right before `sessions.handle` (the command that appends it). */
  sentAt: number;
  /** Filler that makes the event larger. */
  pad?: string;
}

/** Every stamp's JSON begins with this (the server recognises benchmark appends by it). */
export const STAMP_PREFIX = '{"bench":1,';

export type Command =
  | { id: number; cmd: 'now' }
  | { id: number; cmd: 'mem' }
  /** The times noted for each event of a tag (then forgotten). */
  | { id: number; cmd: 'marks'; tag: string }
  | {
      id: number;
      cmd: 'append';
      sessionId: string;
      tag: string;
      count: number;
      /** Evenly spaced (open loop); 0: all requested at once. */
      intervalMs: number;
      padBytes?: number;
    }
  /** Starts the V8 sampling profiler in the server (node:inspector), e.g. around one load phase. */
  | { id: number; cmd: 'profile-start'; intervalUs: number }
  /** Stops it and writes the `.cpuprofile` to `file`. */
  | { id: number; cmd: 'profile-stop'; file: string }
  /** Writes a V8 heap snapshot to `file` (diagnostics: what a subscriber costs). */
  | { id: number; cmd: 'heap-snapshot'; file: string }
  | { id: number; cmd: 'stop' };

/**
 * Times the server notes per benchmark event (indexed by seq):
 *   appendAt   the event store's `append` is called (after the session lock and the decider);
 *   handedAt   the SSE hub has handed the event to every listener (each client's `res.write` returned);
 *   flushedAt  the next tick after that: every socket's corked write has been issued.
 */
export type Mark = 'appendAt' | 'handedAt' | 'flushedAt';
export type Marks = Record<Mark, number[]>;

export interface AppendReport {
  errors: string[];
  /** Revision of the last event appended to the session. */
  lastRevision: number;
  /** Most the timer fired after the scheduled time (ms). */
  timerLagMaxMs: number;
}

export interface MemReport {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  gc: boolean;
}

export interface Ready {
  url: string;
  gateway: string;
  pid: number;
  /** Which server: Studio on a memory or SQLite store, or the bare node:http reference. */
  store: 'memory' | 'sqlite' | 'reference';
}
