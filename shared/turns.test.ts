import { describe, expect, it } from 'vitest';
import { loopCounter } from './testing/loop-counter.ts';
import { takeTurn } from './turns.ts';

describe('takeTurn', () => {
  it('hands out one turn per iteration of the event loop, in the order asked', async () => {
    const loop = loopCounter();
    const seen: [string, number][] = [];
    await Promise.all(
      ['a', 'b', 'c', 'd'].map(async (name) => {
        await takeTurn();
        seen.push([name, loop.now()]);
      }),
    );
    loop.stop();
    expect(seen.map(([name]) => name)).toEqual(['a', 'b', 'c', 'd']);
    const iterations = seen.map(([, iteration]) => iteration);
    expect(new Set(iterations).size).toBe(4);
  });

  it('lets I/O in between two turns', async () => {
    const order: string[] = [];
    const first = takeTurn().then(() => {
      order.push('turn 1');
      // Answered by the next poll for I/O, before the next turn is handed out.
      setTimeout(() => order.push('timer'), 0);
      const until = Date.now() + 5;
      while (Date.now() < until) {
        // Holds the thread, as a long read does, so the timer is due when the turn ends.
      }
    });
    const second = takeTurn().then(() => order.push('turn 2'));
    await Promise.all([first, second]);
    expect(order).toEqual(['turn 1', 'timer', 'turn 2']);
  });
});
