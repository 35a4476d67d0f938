import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../shared/crypto.ts';
import { foldEvents } from '../../shared/decider.ts';
import { deciderSpec } from '../../shared/decider-spec.ts';
import {
  callbackProblem,
  MAX_CODE_FAILURES,
  type OAuthCommand,
  type OAuthEvent,
  oauthDecider,
  oauthFlowId,
  oauthStreamId,
  resultOf,
} from './oauth.ts';

const spec = deciderSpec(oauthDecider);
const flowId = 'f'.repeat(64);
const T0 = '2030-01-01T00:00:00.000Z';
const CODE_HASH = 'c'.repeat(64);
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString();

const start: OAuthCommand = {
  type: 'StartFlow',
  flowId,
  provider: 'oidc',
  studioId: 'acme',
  redirectUri: 'http://127.0.0.1:8600/v1/accounts/oauth/callback',
  redirectTo: null,
  sealedSecrets: 'v1.sealed',
  expiresAt: at(10),
};
const { type: _type, ...startedData } = start;
const started: OAuthEvent = { type: 'OAuthStarted', data: startedData };
const complete = (receivedAt: string): OAuthCommand => ({
  type: 'CompleteFlow',
  flowId,
  accountId: 'acc_1',
  subject: 'alice',
  accountCreated: true,
  receivedAt,
  claimableUntil: at(15),
  codeHash: CODE_HASH,
});
const completed: OAuthEvent = {
  type: 'OAuthCompleted',
  data: {
    flowId,
    provider: 'oidc',
    studioId: 'acme',
    accountId: 'acc_1',
    subject: 'alice',
    accountCreated: true,
    claimableUntil: at(15),
    codeHash: CODE_HASH,
  },
};
const failed = (
  reason: 'provider_error' | 'state_expired' | 'state_replayed' | 'unknown_state',
): OAuthEvent => ({
  type: 'OAuthFailed',
  data: { flowId, reason, message: reason, providerError: null },
});
const fail = (
  reason: 'provider_error' | 'state_expired' | 'state_replayed' | 'unknown_state',
): OAuthCommand => ({
  type: 'FailFlow',
  flowId,
  reason,
  message: reason,
  providerError: null,
});
const claim = (now: string, codeHash = CODE_HASH): OAuthCommand => ({
  type: 'ClaimResult',
  flowId,
  tokenId: 'tok_1',
  now,
  codeHash,
});
const refused = (failures: number): OAuthEvent => ({ type: 'OAuthClaimRefused', data: { flowId, failures } });
const claimed: OAuthEvent = {
  type: 'OAuthResultClaimed',
  data: { flowId, accountId: 'acc_1', tokenId: 'tok_1' },
};

const stateOf = (events: OAuthEvent[]) => foldEvents(oauthDecider, events);

describe('oauth flow decider', () => {
  it('names the stream by the hash of the state, never the state', () => {
    const state = 'the-state-a-browser-carries';
    expect(oauthFlowId(state)).toBe(sha256Hex(state));
    expect(oauthStreamId(oauthFlowId(state))).not.toContain(state);
  });

  it('starts a flow once', () => {
    spec.given([]).when(start).thenEmits([started]);
    spec.given([started]).when(start).thenFails('conflict');
  });

  it('completes a started flow whose callback came in time', () => {
    spec
      .given([started])
      .when(complete(at(9)))
      .thenEmits([completed]);
  });

  it('refuses to complete an unknown, ended or expired flow', () => {
    spec
      .given([])
      .when(complete(at(1)))
      .thenFails('not_found');
    spec
      .given([started, completed])
      .when(complete(at(1)))
      .thenFails('conflict', /ended/);
    spec
      .given([started, failed('provider_error')])
      .when(complete(at(1)))
      .thenFails('conflict', /ended/);
    spec
      .given([started])
      .when(complete(at(10)))
      .thenFails('conflict', /expired/);
  });

  it('a failure reaches the event with credentials scrubbed from its message and the provider error', () => {
    spec
      .given([started])
      .when({
        type: 'FailFlow',
        flowId,
        reason: 'provider_error',
        message: 'token endpoint https://app:s3cr3t-pw@idp.example/token failed',
        providerError: 'invalid_client (client_secret=s3cr3t-pw)',
      })
      .thenEmits([
        {
          type: 'OAuthFailed',
          data: {
            flowId,
            reason: 'provider_error',
            message: 'token endpoint https://***@idp.example/token failed',
            providerError: 'invalid_client (client_secret=***)',
          },
        },
      ]);
  });

  it('records every failure; the first end of a flow stays its outcome', () => {
    spec
      .given([started])
      .when(fail('provider_error'))
      .thenEmits([failed('provider_error')]);
    spec
      .given([])
      .when(fail('unknown_state'))
      .thenEmits([failed('unknown_state')]);
    spec
      .given([started, completed])
      .when(fail('state_replayed'))
      .thenEmits([failed('state_replayed')]);
    expect(stateOf([started, completed, failed('state_replayed')]).status).toBe('completed');
    expect(stateOf([started, failed('provider_error'), failed('state_replayed')]).failure?.reason).toBe(
      'provider_error',
    );
  });

  it('hands the result out once, within its window', () => {
    spec
      .given([started, completed])
      .when(claim(at(12)))
      .thenEmits([claimed]);
    spec
      .given([started, completed, claimed])
      .when(claim(at(12)))
      .thenFails('conflict', /already claimed/);
    spec
      .given([started, completed])
      .when(claim(at(15)))
      .thenFails('conflict', /expired/);
  });

  it('hands the result out only for the code the callback showed; wrong codes are counted, then end the flow', () => {
    const wrong = 'd'.repeat(64);
    spec
      .given([started, completed])
      .when(claim(at(12), wrong))
      .thenEmits([refused(1)]);
    spec
      .given([started, completed, claimed])
      .when(claim(at(12), wrong))
      .thenEmits([refused(1)]);
    const almost = Array.from({ length: MAX_CODE_FAILURES - 1 }, (_, i) => refused(i + 1));
    spec
      .given([started, completed, ...almost])
      .when(claim(at(12)))
      .thenEmits([claimed]);
    spec
      .given([started, completed, ...almost])
      .when(claim(at(12), wrong))
      .thenEmits([refused(MAX_CODE_FAILURES)]);
    const ended = stateOf([started, completed, ...almost, refused(MAX_CODE_FAILURES)]);
    expect(resultOf(ended, at(12))).toEqual({ status: 'failed', claimable: false });
    expect(ended.failure?.reason).toBe('claim_refused');
    spec
      .given([started, completed, ...almost, refused(MAX_CODE_FAILURES)])
      .when(claim(at(12)))
      .thenFails('conflict', /failed/);
    // Completed before codes existed: no code can claim it.
    const { codeHash: _codeHash, ...withoutCode } = (completed as { data: Record<string, unknown> }).data;
    spec
      .given([started, { type: 'OAuthCompleted', data: withoutCode } as OAuthEvent])
      .when(claim(at(12)))
      .thenEmits([refused(1)]);
  });

  it('has nothing to claim before completion or after a failure', () => {
    spec
      .given([])
      .when(claim(at(1)))
      .thenFails('not_found');
    spec
      .given([started])
      .when(claim(at(1)))
      .thenFails('conflict', /pending/);
    spec
      .given([started, failed('provider_error')])
      .when(claim(at(1)))
      .thenFails('conflict', /failed/);
  });
});

describe('what a callback and a poll see', () => {
  it('callbackProblem: unknown, replayed, expired, or none', () => {
    expect(callbackProblem(stateOf([]), at(1))).toBe('unknown_state');
    expect(callbackProblem(stateOf([started]), at(1))).toBeNull();
    expect(callbackProblem(stateOf([started]), at(10))).toBe('state_expired');
    expect(callbackProblem(stateOf([started, completed]), at(1))).toBe('state_replayed');
    expect(callbackProblem(stateOf([started, failed('provider_error')]), at(1))).toBe('state_replayed');
  });

  it('resultOf: pending, expired, failed, completed (claimable once, then not)', () => {
    expect(resultOf(stateOf([]), at(1))).toBeUndefined();
    expect(resultOf(stateOf([started]), at(1))).toEqual({ status: 'pending', claimable: false });
    expect(resultOf(stateOf([started]), at(11))).toEqual({ status: 'expired', claimable: false });
    expect(resultOf(stateOf([started, failed('state_expired')]), at(11))).toEqual({
      status: 'expired',
      claimable: false,
    });
    expect(resultOf(stateOf([started, failed('provider_error')]), at(1))).toEqual({
      status: 'failed',
      claimable: false,
    });
    expect(resultOf(stateOf([started, completed]), at(12))).toEqual({ status: 'completed', claimable: true });
    expect(resultOf(stateOf([started, completed]), at(16))).toEqual({ status: 'expired', claimable: false });
    expect(resultOf(stateOf([started, completed, claimed]), at(12))).toEqual({
      status: 'completed',
      claimable: false,
    });
  });
});
