import { describe, expect, it } from 'vitest';
import { FREE, type Price } from '../../ai/prices/price.ts';
import { type PriceReader, TurnPricer } from './turn-cost.ts';

const echo: Price = { ...FREE, input_per_mtok: 3, output_per_mtok: 7 };

/** A reader answering the prices given, or failing as `fetch` does when nothing listens. */
function reader(answers: (ReadonlyMap<string, Price> | 'unreachable')[]): PriceReader & { reads: number } {
  const state = {
    reads: 0,
    async prices() {
      const answer = answers[Math.min(state.reads++, answers.length - 1)];
      if (answer === 'unreachable' || answer === undefined) throw new TypeError('fetch failed');
      return answer;
    },
  };
  return state;
}

describe('TurnPricer', () => {
  it('prices a call at the model’s price, as the gateway does (micro-dollars, rounded)', async () => {
    const pricer = new TurnPricer(reader([new Map([['dev/echo', echo]])]));
    // 12 × 3 + 34 × 7 = 274 micro-dollars.
    expect(await pricer.costUsd(['dev/echo'], { inputTokens: 12, outputTokens: 34 })).toBe(0.000274);
    // 1 token at 0.4 $/Mtok is 0.4 micro-dollars: rounded as the gateway rounds.
    const cheap = new TurnPricer(reader([new Map([['m', { ...FREE, input_per_mtok: 0.4 }]])]));
    expect(await cheap.costUsd(['m'], { inputTokens: 1, outputTokens: 0 })).toBe(0);
    expect(await cheap.costUsd(['m'], { inputTokens: 10, outputTokens: 0 })).toBe(0.000004);
  });

  it('uses the first model the gateway prices: the one that answered, else the one asked for', async () => {
    const prices = new Map([
      ['dev/echo', echo],
      ['other', { ...FREE, input_per_mtok: 100 }],
    ]);
    const pricer = new TurnPricer(reader([prices]));
    const used = { inputTokens: 1, outputTokens: 1 };
    expect(await pricer.costUsd(['other', 'dev/echo'], used)).toBe(0.0001);
    expect(await pricer.costUsd(['upstream-name', 'dev/echo'], used)).toBe(0.00001);
  });

  it('costs 0 for a model the gateway has no price for, or a free one', async () => {
    const pricer = new TurnPricer(reader([new Map([['local/free', FREE]])]));
    expect(await pricer.costUsd(['unknown/model'], { inputTokens: 50, outputTokens: 50 })).toBe(0);
    expect(await pricer.costUsd(['local/free'], { inputTokens: 50, outputTokens: 50 })).toBe(0);
  });

  it('leaves the cost out when the gateway cannot be asked, and asks again next time', async () => {
    const prices = reader(['unreachable', new Map([['dev/echo', echo]])]);
    const pricer = new TurnPricer(prices, { now: () => 0 });
    expect(await pricer.costUsd(['dev/echo'], { inputTokens: 1, outputTokens: 1 })).toBeUndefined();
    expect(await pricer.costUsd(['dev/echo'], { inputTokens: 1, outputTokens: 1 })).toBe(0.00001);
    expect(prices.reads).toBe(2);
  });

  it('reads the prices once while they are fresh, and again once they are not', async () => {
    let now = 0;
    const prices = reader([new Map([['dev/echo', echo]]), new Map([['dev/echo', FREE]])]);
    const pricer = new TurnPricer(prices, { ttlMs: 1_000, now: () => now });
    const used = { inputTokens: 1, outputTokens: 1 };
    expect(await pricer.costUsd(['dev/echo'], used)).toBe(0.00001);
    now = 999;
    expect(await pricer.costUsd(['dev/echo'], used)).toBe(0.00001);
    expect(prices.reads).toBe(1);
    now = 1_000;
    expect(await pricer.costUsd(['dev/echo'], used)).toBe(0);
    expect(prices.reads).toBe(2);
  });
});
