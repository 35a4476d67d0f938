import { describe, it } from 'vitest';
import { deciderSpec } from '../../shared/decider-spec.ts';
import { type StudioEvent, studioDecider } from './studio.ts';

const spec = deciderSpec(studioDecider);
const id = 'acme';
const created: StudioEvent = { type: 'StudioCreated', data: { studioId: id, name: 'Acme' } };
const paused: StudioEvent = { type: 'StudioPaused', data: { studioId: id, reason: 'billing' } };
const removed: StudioEvent = { type: 'StudioRemoved', data: { studioId: id } };
const issued = (tokenId: string): StudioEvent => ({
  type: 'TokenIssued',
  data: { studioId: id, tokenId, name: 'ci', prefix: 'stk_abcd', tokenHash: 'h', expiresAt: null },
});

describe('studio decider: lifecycle', () => {
  it('creates a new studio', () => {
    spec.given([]).when({ type: 'CreateStudio', studioId: id, name: 'Acme' }).thenEmits([created]);
  });

  it('refuses to create a studio twice, whatever its status', () => {
    spec.given([created]).when({ type: 'CreateStudio', studioId: id, name: 'x' }).thenFails('conflict');
    spec
      .given([created, removed])
      .when({ type: 'CreateStudio', studioId: id, name: 'x' })
      .thenFails('conflict');
  });

  it.each([
    { type: 'PauseStudio', studioId: id, reason: null },
    { type: 'ActivateStudio', studioId: id },
    { type: 'RemoveStudio', studioId: id },
  ] as const)('answers not_found for $type on an unknown studio', (command) => {
    spec.given([]).when(command).thenFails('not_found');
  });

  it('pauses an active studio with its reason', () => {
    spec.given([created]).when({ type: 'PauseStudio', studioId: id, reason: 'billing' }).thenEmits([paused]);
  });

  it('pausing a paused studio succeeds without a new event', () => {
    spec.given([created, paused]).when({ type: 'PauseStudio', studioId: id, reason: 'again' }).thenEmits([]);
  });

  it('activates a paused studio', () => {
    spec
      .given([created, paused])
      .when({ type: 'ActivateStudio', studioId: id })
      .thenEmits([{ type: 'StudioActivated', data: { studioId: id } }]);
  });

  it('activating an active studio succeeds without a new event', () => {
    spec.given([created]).when({ type: 'ActivateStudio', studioId: id }).thenEmits([]);
    spec
      .given([created, paused, { type: 'StudioActivated', data: { studioId: id } }])
      .when({ type: 'ActivateStudio', studioId: id })
      .thenEmits([]);
  });

  it('removing revokes every live token of the studio', () => {
    spec
      .given([
        created,
        issued('t1'),
        issued('t2'),
        { type: 'TokenRevoked', data: { studioId: id, tokenId: 't1', reason: 'revoked' } },
      ])
      .when({ type: 'RemoveStudio', studioId: id })
      .thenEmits([
        removed,
        { type: 'TokenRevoked', data: { studioId: id, tokenId: 't2', reason: 'studio_removed' } },
      ]);
  });

  it('removes a paused studio', () => {
    spec.given([created, paused]).when({ type: 'RemoveStudio', studioId: id }).thenEmits([removed]);
  });

  it('removing a removed studio succeeds without a new event', () => {
    spec.given([created, removed]).when({ type: 'RemoveStudio', studioId: id }).thenEmits([]);
  });

  it.each([
    { type: 'PauseStudio', studioId: id, reason: null },
    { type: 'ActivateStudio', studioId: id },
  ] as const)('a removed studio cannot leave removed: $type is a conflict', (command) => {
    spec
      .given([created, removed])
      .when(command)
      .thenFails('conflict', /removed/);
  });
});

describe('studio decider: settings', () => {
  const settings = (cacheTtlS: number) =>
    ({ type: 'ChangeStudioSettings', studioId: id, cacheTtlS }) as const;
  const changed = (cacheTtlS: number): StudioEvent => ({
    type: 'StudioSettingsChanged',
    data: { studioId: id, cacheTtlS },
  });

  it('creates a studio with its response cache on when asked, and off (no field) otherwise', () => {
    spec
      .given([])
      .when({ type: 'CreateStudio', studioId: id, name: 'Acme', cacheTtlS: 300 })
      .thenEmits([{ type: 'StudioCreated', data: { studioId: id, name: 'Acme', cacheTtlS: 300 } }]);
    spec
      .given([])
      .when({ type: 'CreateStudio', studioId: id, name: 'Acme', cacheTtlS: 0 })
      .thenEmits([created]);
  });

  it('changes the cache TTL, and records nothing when it is already that', () => {
    spec
      .given([created])
      .when(settings(60))
      .thenEmits([changed(60)]);
    spec
      .given([created, changed(60)])
      .when(settings(60))
      .thenEmits([]);
    spec
      .given([created, changed(60)])
      .when(settings(0))
      .thenEmits([changed(0)]);
    spec.given([created]).when(settings(0)).thenEmits([]);
  });

  it('a TTL given at creation is the one in force', () => {
    const createdCached: StudioEvent = {
      type: 'StudioCreated',
      data: { studioId: id, name: 'Acme', cacheTtlS: 300 },
    };
    spec.given([createdCached]).when(settings(300)).thenEmits([]);
    spec
      .given([createdCached])
      .when(settings(0))
      .thenEmits([changed(0)]);
  });

  it('a paused studio takes settings; an unknown one is not_found, a removed one a conflict', () => {
    spec
      .given([created, paused])
      .when(settings(60))
      .thenEmits([changed(60)]);
    spec.given([]).when(settings(60)).thenFails('not_found');
    spec
      .given([created, removed])
      .when(settings(60))
      .thenFails('conflict', /removed/);
  });
});
