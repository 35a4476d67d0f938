import { afterEach, describe, expect, it, vi } from 'vitest';
import { onHeartbeat } from './heartbeat.ts';

describe('onHeartbeat', () => {
  afterEach(() => vi.useRealTimers());

  it('calls every listener of a period from one timer, and stops each one independently', () => {
    vi.useFakeTimers();
    const calls: string[] = [];
    const stopA = onHeartbeat(1000, () => calls.push('a'));
    const stopB = onHeartbeat(1000, () => calls.push('b'));
    expect(vi.getTimerCount()).toBe(1);

    vi.advanceTimersByTime(1000);
    expect(calls).toEqual(['a', 'b']);

    stopA();
    vi.advanceTimersByTime(1000);
    expect(calls).toEqual(['a', 'b', 'b']);

    stopB();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(5000);
    expect(calls).toEqual(['a', 'b', 'b']);
  });

  it('keeps separate timers for separate periods', () => {
    vi.useFakeTimers();
    let fast = 0;
    let slow = 0;
    const stopFast = onHeartbeat(100, () => fast++);
    const stopSlow = onHeartbeat(1000, () => slow++);
    vi.advanceTimersByTime(1000);
    expect([fast, slow]).toEqual([10, 1]);
    stopFast();
    stopSlow();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('stops only the registration it was given when one function is registered twice', () => {
    vi.useFakeTimers();
    let n = 0;
    const listener = () => n++;
    const stop1 = onHeartbeat(500, listener);
    const stop2 = onHeartbeat(500, listener);
    vi.advanceTimersByTime(500);
    expect(n).toBe(2);
    stop1();
    vi.advanceTimersByTime(500);
    expect(n).toBe(3);
    stop2();
  });
});
