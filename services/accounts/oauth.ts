import { secretEquals, sha256Hex } from '../../shared/crypto.ts';
import { type Decider, unknownCase } from '../../shared/decider.ts';
import { DomainError } from '../../shared/errors.ts';
import { scrubCredentials } from '../../shared/scrub-credentials.ts';

/**
 * One stream per sign-in flow, named by the SHA-256 of its state: the state is the bearer secret
 * of the flow's result, so neither the log nor its stream names ever show it.
 */
export const oauthFlowId = (state: string) => sha256Hex(state);
export const oauthStreamId = (flowId: string) => `oauth-${flowId}`;

export type OAuthFailureReason =
  | 'unknown_state'
  | 'state_replayed'
  | 'state_expired'
  /** The provider answered `error=` (the person declined, or the provider refused the request). */
  | 'provider_error'
  | 'studio_paused'
  | 'studio_unavailable'
  /** The token endpoint refused the code (a wrong PKCE verifier, a code used twice, a forged code). */
  | 'code_rejected'
  /** The exchange could not be done: the provider unreachable, our credentials refused, a bad answer. */
  | 'exchange_failed'
  /** Nobody has this identity in the studio, and sign-up is closed to it. */
  | 'signup_closed'
  /** The sign-in code shown in the browser was entered wrong too many times: the result is gone. */
  | 'claim_refused'
  | 'internal_error';

/** Wrong sign-in codes a flow's result survives; the next one ends it. */
export const MAX_CODE_FAILURES = 5;

export type OAuthEvent =
  | {
      type: 'OAuthStarted';
      data: {
        flowId: string;
        provider: string;
        studioId: string;
        /** The callback URL given to the provider; the exchange must name the same. */
        redirectUri: string;
        redirectTo: string | null;
        /** `{codeVerifier, nonce}` as JSON, encrypted with the master key. */
        sealedSecrets: string;
        expiresAt: string;
      };
    }
  | {
      type: 'OAuthCompleted';
      data: {
        flowId: string;
        provider: string;
        studioId: string;
        accountId: string;
        subject: string;
        accountCreated: boolean;
        /** Until when the result (a token, issued when claimed) can be claimed. */
        claimableUntil: string;
        /**
         * Keyed digest of the one-time code the callback showed the browser: the result is handed
         * out only to whoever presents it. Absent in flows completed before codes existed (never
         * claimable).
         */
        codeHash?: string;
      };
    }
  | {
      type: 'OAuthFailed';
      data: { flowId: string; reason: OAuthFailureReason; message: string; providerError: string | null };
    }
  | { type: 'OAuthResultClaimed'; data: { flowId: string; accountId: string; tokenId: string } }
  /** A claim with a wrong code; the `MAX_CODE_FAILURES`-th ends the flow. */
  | { type: 'OAuthClaimRefused'; data: { flowId: string; failures: number } };

export type OAuthCommand =
  | {
      type: 'StartFlow';
      flowId: string;
      provider: string;
      studioId: string;
      redirectUri: string;
      redirectTo: string | null;
      sealedSecrets: string;
      expiresAt: string;
    }
  | {
      type: 'CompleteFlow';
      flowId: string;
      accountId: string;
      subject: string;
      accountCreated: boolean;
      /** When the callback arrived: it must be before the state expired. */
      receivedAt: string;
      claimableUntil: string;
      codeHash: string;
    }
  | {
      type: 'FailFlow';
      flowId: string;
      reason: OAuthFailureReason;
      message: string;
      providerError: string | null;
    }
  /** `codeHash`: the digest of the code presented, compared here so that every guess is counted first. */
  | { type: 'ClaimResult'; flowId: string; tokenId: string; now: string; codeHash: string };

export interface OAuthState {
  status: 'none' | 'started' | 'completed' | 'failed';
  provider: string;
  studioId: string;
  redirectUri: string;
  redirectTo: string | null;
  sealedSecrets: string;
  expiresAt: string;
  accountId: string | null;
  claimableUntil: string | null;
  claimed: boolean;
  codeHash: string | null;
  codeFailures: number;
  failure: { reason: OAuthFailureReason; message: string } | null;
}

export const OAUTH_EVENT_TYPES = [
  'OAuthStarted',
  'OAuthCompleted',
  'OAuthFailed',
  'OAuthResultClaimed',
  'OAuthClaimRefused',
] as const satisfies readonly OAuthEvent['type'][];

const before = (a: string, b: string) => Date.parse(a) < Date.parse(b);

/** What is wrong with a callback for this flow before anything is exchanged, or null when nothing is. */
export function callbackProblem(
  state: OAuthState,
  now: string,
): 'unknown_state' | 'state_replayed' | 'state_expired' | null {
  if (state.status === 'none') return 'unknown_state';
  if (state.status !== 'started') return 'state_replayed';
  if (!before(now, state.expiresAt)) return 'state_expired';
  return null;
}

export type OAuthResultStatus = 'pending' | 'completed' | 'failed' | 'expired';

/** How `oauth/result` sees a flow: its status, and whether its token may be handed out now. */
export function resultOf(
  state: OAuthState,
  now: string,
): { status: OAuthResultStatus; claimable: boolean } | undefined {
  switch (state.status) {
    case 'none':
      return undefined;
    case 'started':
      return { status: before(now, state.expiresAt) ? 'pending' : 'expired', claimable: false };
    case 'failed':
      return { status: state.failure?.reason === 'state_expired' ? 'expired' : 'failed', claimable: false };
    case 'completed': {
      if (state.claimed) return { status: 'completed', claimable: false };
      const open = state.claimableUntil !== null && before(now, state.claimableUntil);
      return { status: open ? 'completed' : 'expired', claimable: open };
    }
    default: {
      const unknown: never = state.status;
      throw new Error(`unknown status ${String(unknown)}`);
    }
  }
}

function decide(command: OAuthCommand, state: OAuthState): OAuthEvent[] {
  const { flowId } = command;
  switch (command.type) {
    case 'StartFlow': {
      if (state.status !== 'none') throw new DomainError('conflict', `flow ${flowId} already exists`);
      const { type: _type, ...data } = command;
      return [{ type: 'OAuthStarted', data }];
    }
    case 'CompleteFlow': {
      if (state.status === 'none') throw new DomainError('not_found', `flow ${flowId} does not exist`);
      if (state.status !== 'started') throw new DomainError('conflict', `flow ${flowId} has already ended`);
      if (!before(command.receivedAt, state.expiresAt))
        throw new DomainError('conflict', `flow ${flowId} expired at ${state.expiresAt}`);
      const { accountId, subject, accountCreated, claimableUntil, codeHash } = command;
      return [
        {
          type: 'OAuthCompleted',
          data: {
            flowId,
            provider: state.provider,
            studioId: state.studioId,
            accountId,
            subject,
            accountCreated,
            claimableUntil,
            codeHash,
          },
        },
      ];
    }
    case 'FailFlow': {
      // Recorded whatever the flow's status: after its end it is a rejected replay, which changes nothing.
      const { reason } = command;
      const message = scrubCredentials(command.message);
      const providerError = command.providerError === null ? null : scrubCredentials(command.providerError);
      return [{ type: 'OAuthFailed', data: { flowId, reason, message, providerError } }];
    }
    case 'ClaimResult': {
      const result = resultOf(state, command.now);
      if (!result) throw new DomainError('not_found', `flow ${flowId} does not exist`);
      if (result.status !== 'completed')
        throw new DomainError('conflict', `flow ${flowId} has no result to claim (${result.status})`);
      if (state.codeHash === null || !secretEquals(state.codeHash, command.codeHash))
        return [{ type: 'OAuthClaimRefused', data: { flowId, failures: state.codeFailures + 1 } }];
      if (state.claimed)
        throw new DomainError('conflict', `the result of flow ${flowId} was already claimed`);
      if (!result.claimable)
        throw new DomainError('conflict', `flow ${flowId} has no result to claim (${result.status})`);
      return [
        {
          type: 'OAuthResultClaimed',
          data: { flowId, accountId: state.accountId!, tokenId: command.tokenId },
        },
      ];
    }
    default:
      return unknownCase('command', command);
  }
}

function evolve(state: OAuthState, event: OAuthEvent): OAuthState {
  switch (event.type) {
    case 'OAuthStarted': {
      const { flowId: _flowId, ...data } = event.data;
      return { ...state, ...data, status: 'started' };
    }
    case 'OAuthCompleted':
      return {
        ...state,
        status: 'completed',
        accountId: event.data.accountId,
        claimableUntil: event.data.claimableUntil,
        codeHash: event.data.codeHash ?? null,
      };
    case 'OAuthFailed':
      // The first end of a flow is its outcome; later failures record rejected replays.
      if (state.status === 'completed' || state.status === 'failed') return state;
      return {
        ...state,
        status: 'failed',
        failure: { reason: event.data.reason, message: event.data.message },
      };
    case 'OAuthResultClaimed':
      return { ...state, claimed: true };
    case 'OAuthClaimRefused': {
      const codeFailures = event.data.failures;
      if (codeFailures < MAX_CODE_FAILURES) return { ...state, codeFailures };
      return {
        ...state,
        codeFailures,
        status: 'failed',
        failure: { reason: 'claim_refused', message: 'the sign-in code was entered wrong too many times' },
      };
    }
    default:
      return unknownCase('event', event);
  }
}

export const oauthDecider: Decider<OAuthCommand, OAuthEvent, OAuthState> = {
  initialState: () => ({
    status: 'none',
    provider: '',
    studioId: '',
    redirectUri: '',
    redirectTo: null,
    sealedSecrets: '',
    expiresAt: '',
    accountId: null,
    claimableUntil: null,
    claimed: false,
    codeHash: null,
    codeFailures: 0,
    failure: null,
  }),
  decide,
  evolve,
};
