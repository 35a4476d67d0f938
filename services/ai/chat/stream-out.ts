import type { ServerResponse } from 'node:http';

/**
 * Writes to a response, waiting for it to drain when the client reads slower than we produce, or to
 * close when the client goes away meanwhile (then nothing will ever drain).
 */
export async function writeWithBackpressure(res: ServerResponse, text: string): Promise<void> {
  if (res.write(text) || res.destroyed) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
