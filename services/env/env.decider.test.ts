import { describe, it } from 'vitest';
import { deciderSpec } from '../../shared/decider-spec.ts';
import { type EnvEvent, envDecider, type StoredValue } from './env.ts';

const spec = deciderSpec(envDecider);
const plain = (value: string): StoredValue => ({ secret: false, value });
const sealed: StoredValue = { secret: true, sealed: 'v1.iv.tag.body' };
const set = (key: string, stored: StoredValue): EnvEvent => ({
  type: 'EnvVariableSet',
  data: { key, ...stored },
});

describe('env decider', () => {
  it('sets a plain variable', () => {
    spec
      .given([])
      .when({ type: 'SetVariable', key: 'REGION', stored: plain('eu') })
      .thenEmits([set('REGION', plain('eu'))]);
  });

  it('sets a secret as its sealed form only', () => {
    spec
      .given([])
      .when({ type: 'SetVariable', key: 'OPENAI_API_KEY', stored: sealed })
      .thenEmits([set('OPENAI_API_KEY', sealed)]);
  });

  it('overwrites an existing variable', () => {
    spec
      .given([set('REGION', plain('eu'))])
      .when({ type: 'SetVariable', key: 'REGION', stored: plain('us') })
      .thenEmits([set('REGION', plain('us'))]);
  });

  it('removes a variable that is set', () => {
    spec
      .given([set('REGION', plain('eu'))])
      .when({ type: 'RemoveVariable', key: 'REGION' })
      .thenEmits([{ type: 'EnvVariableRemoved', data: { key: 'REGION' } }]);
  });

  it('answers not_found when removing a variable that is not set', () => {
    spec.given([]).when({ type: 'RemoveVariable', key: 'REGION' }).thenFails('not_found');
    spec
      .given([set('REGION', plain('eu')), { type: 'EnvVariableRemoved', data: { key: 'REGION' } }])
      .when({ type: 'RemoveVariable', key: 'REGION' })
      .thenFails('not_found');
  });

  it('imports every entry in one decision, ending with a summary', () => {
    spec
      .given([set('A', plain('old'))])
      .when({
        type: 'ImportVariables',
        overwrite: true,
        entries: [
          { key: 'A', stored: plain('1') },
          { key: 'B', stored: plain('2') },
        ],
      })
      .thenEmits([
        set('A', plain('1')),
        set('B', plain('2')),
        { type: 'EnvImported', data: { imported: ['A', 'B'], skipped: [] } },
      ]);
  });

  it('without overwrite, skips keys that are already set', () => {
    spec
      .given([set('A', plain('old'))])
      .when({
        type: 'ImportVariables',
        overwrite: false,
        entries: [
          { key: 'A', stored: plain('1') },
          { key: 'B', stored: plain('2') },
        ],
      })
      .thenEmits([set('B', plain('2')), { type: 'EnvImported', data: { imported: ['B'], skipped: ['A'] } }]);
  });

  it('keeps the last value of a key repeated in one import', () => {
    spec
      .given([])
      .when({
        type: 'ImportVariables',
        overwrite: true,
        entries: [
          { key: 'A', stored: plain('1') },
          { key: 'A', stored: plain('2') },
        ],
      })
      .thenEmits([set('A', plain('2')), { type: 'EnvImported', data: { imported: ['A'], skipped: [] } }]);
  });

  it('an empty import records nothing', () => {
    spec.given([]).when({ type: 'ImportVariables', overwrite: true, entries: [] }).thenEmits([]);
  });
});
