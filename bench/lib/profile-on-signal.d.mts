import type { Session } from 'node:inspector/promises';

export function profileOnSignal(
  file: string,
  start: (session: Session) => Promise<unknown>,
  stop: (session: Session) => Promise<unknown>,
  onError: (error: unknown) => void,
): void;

export function cpuProfileOnSignal(file: string, onError: (error: unknown) => void): void;
