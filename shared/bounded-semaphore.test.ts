import { describe, expect, it } from 'vitest';
import { BoundedSemaphore, SemaphoreFull } from './bounded-semaphore.ts';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

describe('BoundedSemaphore', () => {
  it('runs at most `slots` at once, queues up to `maxQueued`, refuses the rest, and drains in order', async () => {
    const semaphore = new BoundedSemaphore(2, 3);
    const g = gate();
    let inFlight = 0;
    let peak = 0;
    const order: number[] = [];
    const task = (i: number) => async () => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await g.opened;
      order.push(i);
      inFlight--;
      return i;
    };
    const results = Array.from({ length: 8 }, (_, i) => semaphore.run(task(i)).catch((e: unknown) => e));
    await Promise.resolve();
    expect(semaphore.running).toBe(2);
    expect(semaphore.queued).toBe(3);
    g.open();
    const settled = await Promise.all(results);
    expect(settled.slice(0, 5)).toEqual([0, 1, 2, 3, 4]);
    for (const refused of settled.slice(5)) expect(refused).toBeInstanceOf(SemaphoreFull);
    expect(peak).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(semaphore.running).toBe(0);
    expect(await semaphore.run(async () => 'again')).toBe('again');
  });

  it('frees the slot when a task throws', async () => {
    const semaphore = new BoundedSemaphore(1, 0);
    await expect(semaphore.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await semaphore.run(async () => 1)).toBe(1);
  });
});
