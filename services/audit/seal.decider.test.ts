import { describe, expect, it } from 'vitest';
import { deciderSpec } from '../../shared/decider-spec.ts';
import { GENESIS_HASH, type SealEvent, sealDecider, sealHash } from './seal.ts';

const spec = deciderSpec(sealDecider);
const digest = (n: number) => n.toString(16).padStart(16, '0');

function sealed(previous: string, events: [number, string][]): SealEvent {
  const body = { previous, first: events[0]![0], last: events.at(-1)![0], events };
  return { type: 'LogSealed', data: { ...body, hash: sealHash(body) } };
}

describe('seal decider', () => {
  it('seals the first range after the genesis hash', () => {
    spec
      .given([])
      .when({
        type: 'SealRange',
        events: [
          [3, digest(3)],
          [7, digest(7)],
        ],
      })
      .thenEmits([
        sealed(GENESIS_HASH, [
          [3, digest(3)],
          [7, digest(7)],
        ]),
      ]);
  });

  it("chains each seal to the previous one's hash", () => {
    const first = sealed(GENESIS_HASH, [[1, digest(1)]]);
    spec
      .given([first])
      .when({ type: 'SealRange', events: [[2, digest(2)]] })
      .thenEmits([sealed(first.data.hash, [[2, digest(2)]])]);
  });

  it('hashes the previous hash, the range and every digest: changing any changes the hash', () => {
    const base = sealed(GENESIS_HASH, [
      [1, digest(1)],
      [2, digest(2)],
    ]).data;
    const { hash, ...body } = base;
    expect(sealHash({ ...body, previous: '1'.repeat(64) })).not.toBe(hash);
    expect(sealHash({ ...body, last: 3 })).not.toBe(hash);
    expect(
      sealHash({
        ...body,
        events: [
          [1, digest(1)],
          [2, digest(9)],
        ],
      }),
    ).not.toBe(hash);
    expect(sealHash({ ...body, events: [[1, digest(1)]] })).not.toBe(hash);
  });

  it('refuses an empty range', () => {
    spec.given([]).when({ type: 'SealRange', events: [] }).thenFails('conflict');
  });

  it('refuses positions already sealed or out of order', () => {
    const first = sealed(GENESIS_HASH, [[5, digest(5)]]);
    spec
      .given([first])
      .when({ type: 'SealRange', events: [[5, digest(5)]] })
      .thenFails('conflict', /not after 5/);
    spec
      .given([first])
      .when({
        type: 'SealRange',
        events: [
          [8, digest(8)],
          [6, digest(6)],
        ],
      })
      .thenFails('conflict', /6 is not after 8/);
  });
});
