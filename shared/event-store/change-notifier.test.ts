import { describe, expect, it } from 'vitest';
import { ChangeNotifier } from './change-notifier.ts';

describe('ChangeNotifier', () => {
  it('wakes the waiters of a signal when it aborts, and no one else', async () => {
    const changes = new ChangeNotifier();
    const stopped = new AbortController();
    const other = new AbortController();
    const woken: string[] = [];
    const first = changes.waitForChange(changes.version, stopped.signal).then(() => woken.push('first'));
    const second = changes.waitForChange(changes.version, stopped.signal).then(() => woken.push('second'));
    const elsewhere = changes.waitForChange(changes.version, other.signal).then(() => woken.push('other'));
    stopped.abort();
    await Promise.all([first, second]);
    expect(woken.sort()).toEqual(['first', 'second']);
    changes.notify();
    await elsewhere;
    expect(woken).toContain('other');
  });

  it('wakes a waiter once the code that awaited the commit went on, before any timer or I/O', async () => {
    const changes = new ChangeNotifier();
    const order: string[] = [];
    const waiting = changes
      .waitForChange(changes.version, new AbortController().signal)
      .then(() => order.push('follower woken'));
    setImmediate(() => order.push('next turn'));
    const committed = Promise.resolve().then(() => changes.notify());
    // The committer goes on through a few promises, then writes (an answer's write leaves in a tick).
    void committed
      .then(() => undefined)
      .then(() => undefined)
      .then(() => process.nextTick(() => order.push('committer wrote')));
    await waiting;
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['committer wrote', 'follower woken', 'next turn']);
  });

  it('wakes a waiter that began before the commits, and not one that began after them', async () => {
    const changes = new ChangeNotifier();
    const signal = new AbortController().signal;
    const before = changes.waitForChange(changes.version, signal);
    changes.notify();
    changes.notify();
    // Begun once both were notified, before the wake: it has seen them, so nothing is news to it.
    let lateWoken = false;
    void changes.waitForChange(changes.version, signal, 50).then(() => {
      lateWoken = true;
    });
    await before;
    await new Promise((resolve) => setImmediate(resolve));
    expect(lateWoken).toBe(false);
  });
});
