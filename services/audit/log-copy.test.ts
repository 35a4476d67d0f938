import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../shared/event-store/memory.ts';
import { compareLogs, type LogReader } from './log-copy.ts';

const metadata = { actor: 'system' };

/** A target that, like PostgreSQL behind another client's open transaction, shows its events late. */
function showsLate(log: LogReader, afterPolls: number): LogReader {
  let polls = 0;
  const shown = () => polls >= afterPolls;
  return {
    headPosition: async () => {
      polls += 1;
      return shown() ? log.headPosition() : 0;
    },
    readAll: async (options) => (shown() ? log.readAll(options) : []),
  };
}

describe('compareLogs', () => {
  it('waits until the target shows every copied event, then finds the copy faithful', async () => {
    const source = new MemoryEventStore();
    for (let i = 0; i < 3; i++) await source.append(`s-${i}`, [{ type: 'Noted', data: { i } }], { metadata });
    // The same log on both sides: a faithful copy, shown by the target only on its fourth look.
    const report = await compareLogs(source, showsLate(source, 4));
    expect(report).toMatchObject({ source: 3, target: 3, mismatches: 0 });
  });
});
