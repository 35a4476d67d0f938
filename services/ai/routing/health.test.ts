import { describe, expect, it } from 'vitest';
import { RouteHealth } from './health.ts';

const cooldown = { failures: 3, windowS: 60, cooldownS: 30 };

/** A breaker on a clock the test moves by hand. */
function breaker() {
  let now = 1_000_000;
  const health = new RouteHealth(() => now);
  return { health, advance: (ms: number) => (now += ms), now: () => now };
}

describe('RouteHealth', () => {
  it('cools a target down once it failed N times within the window, and tries it again after', () => {
    const { health, advance, now } = breaker();
    health.failed('r', 'a', cooldown);
    health.failed('r', 'a', cooldown);
    expect(health.stateOf('r', 'a', cooldown)).toEqual({
      state: 'healthy',
      recentFailures: 2,
      coolingUntil: null,
    });
    health.failed('r', 'a', cooldown);
    expect(health.isCooling('r', 'a')).toBe(true);
    expect(health.stateOf('r', 'a', cooldown)).toEqual({
      state: 'cooling',
      recentFailures: 0,
      coolingUntil: now() + 30_000,
    });
    expect(health.msUntilReturn('r', ['a', 'b'])).toBe(30_000);

    advance(30_000);
    expect(health.isCooling('r', 'a')).toBe(false);
    expect(health.stateOf('r', 'a', cooldown).state).toBe('healthy');
    expect(health.msUntilReturn('r', ['a'])).toBeUndefined();
  });

  it('forgets failures older than the window', () => {
    const { health, advance } = breaker();
    health.failed('r', 'a', cooldown);
    health.failed('r', 'a', cooldown);
    advance(60_001);
    health.failed('r', 'a', cooldown);
    expect(health.isCooling('r', 'a')).toBe(false);
    expect(health.stateOf('r', 'a', cooldown).recentFailures).toBe(1);
  });

  it('keeps each route and each target apart', () => {
    const { health } = breaker();
    for (let i = 0; i < 3; i++) health.failed('r', 'a', cooldown);
    expect(health.isCooling('r', 'a')).toBe(true);
    expect(health.isCooling('r', 'b')).toBe(false);
    expect(health.isCooling('other', 'a')).toBe(false);
  });
});
