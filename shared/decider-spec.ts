import { expect } from 'vitest';
import { type Decider, type DomainEvent, foldEvents } from './decider.ts';
import { DomainError } from './errors.ts';

/**
 * Given/when/then for deciders: `given(events).when(command).thenEmits(expected)` or `.thenFails(kind)`.
 */
export function deciderSpec<Command, Event extends DomainEvent, State>(
  decider: Decider<Command, Event, State>,
) {
  return {
    given(history: Event[]) {
      const state = foldEvents(decider, history);
      return {
        when(command: Command) {
          const run = () => decider.decide(command, state);
          return {
            thenEmits(expected: Event[]) {
              expect(run()).toEqual(expected);
            },
            thenFails(kind: DomainError['kind'], message?: RegExp) {
              let caught: unknown;
              try {
                run();
              } catch (error) {
                caught = error;
              }
              expect(caught).toBeInstanceOf(DomainError);
              expect((caught as DomainError).kind).toBe(kind);
              if (message) expect((caught as DomainError).message).toMatch(message);
            },
          };
        },
      };
    },
  };
}
