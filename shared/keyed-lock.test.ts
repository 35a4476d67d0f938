import { describe, expect, it } from 'vitest';
import { KeyedLock } from './keyed-lock.ts';

/** A promise with its resolve and reject, to hold a task until the test lets it go. */
function gate() {
  let open!: () => void;
  let fail!: (error: Error) => void;
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

const nextTick = () => new Promise((resolve) => setImmediate(resolve));

describe('KeyedLock', () => {
  it('runs the tasks of one key one after the other, in the order they came', async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    const first = gate();
    const a = lock.run('k', async () => {
      log.push('a starts');
      await first.promise;
      log.push('a ends');
    });
    const b = lock.run('k', async () => void log.push('b runs'));
    await nextTick();
    expect(log).toEqual(['a starts']);
    first.open();
    await Promise.all([a, b]);
    expect(log).toEqual(['a starts', 'a ends', 'b runs']);
  });

  it('runs tasks of other keys alongside', async () => {
    const lock = new KeyedLock();
    const held = gate();
    const a = lock.run('a', () => held.promise);
    await expect(lock.run('b', async () => 'b done')).resolves.toBe('b done');
    held.open();
    await a;
  });

  it('a task that throws gives its error to its caller and lets the next one run', async () => {
    const lock = new KeyedLock();
    const failing = lock.run('k', async () => {
      throw new Error('boom');
    });
    const next = lock.run('k', async () => 'next');
    await expect(failing).rejects.toThrow('boom');
    await expect(next).resolves.toBe('next');
  });

  it('forgets a key once nothing waits on it, after success and after failure', async () => {
    const lock = new KeyedLock();
    const held = gate();
    const tasks = [
      lock.run('ok', async () => 1),
      lock.run('fails', () => held.promise),
      lock.run(['x', 'y'], async () => 2),
    ];
    expect(lock.size).toBeGreaterThan(0);
    held.fail(new Error('no'));
    await Promise.allSettled(tasks);
    await nextTick();
    expect(lock.size).toBe(0);
  });

  it('holds every key of a list, so a task on any one of them waits', async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    const held = gate();
    const both = lock.run(['b', 'a', 'a'], async () => {
      await held.promise;
      log.push('both');
    });
    await nextTick(); // the keys are taken one at a time, in sorted order
    const onB = lock.run('b', async () => void log.push('b'));
    await nextTick();
    expect(log).toEqual([]);
    held.open();
    await Promise.all([both, onB]);
    expect(log).toEqual(['both', 'b']);
  });

  it('idle() settles once every task queued so far has settled', async () => {
    const lock = new KeyedLock();
    const held = gate();
    let done = false;
    void lock.run('k', () => held.promise).then(() => (done = true));
    const idle = lock.idle();
    held.open();
    await idle;
    await nextTick();
    expect(done).toBe(true);
  });
});
