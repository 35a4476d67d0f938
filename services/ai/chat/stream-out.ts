import { once } from 'node:events';
import type { Response } from 'express';

/** Writes to a response, waiting for it to drain when the client reads slower than we produce. */
export async function writeWithBackpressure(res: Response, text: string): Promise<void> {
  if (!res.write(text) && !res.destroyed) await once(res, 'drain');
}
