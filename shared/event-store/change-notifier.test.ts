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
});
