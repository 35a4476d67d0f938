import { emailKey, identityKey } from '../../projections/accounts.ts';
import type { AccountsEnv } from '../../shared/config.ts';
import { newId } from '../../shared/crypto.ts';
import type { ActionContext } from '../../shared/http/action.ts';
import type { AccountsDeps } from './deps.ts';
import type { OAuthProfile } from './providers/types.ts';

export type AccountResolution =
  | { kind: 'found'; accountId: string; linked: boolean }
  | { kind: 'created'; accountId: string }
  | { kind: 'refused'; message: string };

/** Whether the sign-up policy lets this identity create an account. */
export function maySignUp(policy: AccountsEnv['STUDIO_OAUTH_SIGNUP'], profile: OAuthProfile): boolean {
  switch (policy.mode) {
    case 'closed':
      return false;
    case 'open':
      return true;
    case 'domains': {
      if (profile.email === null || !profile.emailVerified) return false;
      const domain = profile.email.slice(profile.email.lastIndexOf('@') + 1).toLowerCase();
      return policy.domains.includes(domain);
    }
    default: {
      const unknown: never = policy;
      throw new Error(`unknown policy ${JSON.stringify(unknown)}`);
    }
  }
}

/**
 * The account an OAuth identity signs in to: the one linked to it; else the studio's account with
 * the same email, when the provider vouches for the email (then linked); else a new one, when the
 * sign-up policy allows it. An email the provider does not vouch for is never trusted.
 */
export async function resolveAccount(
  deps: AccountsDeps,
  flow: { studioId: string; provider: string },
  profile: OAuthProfile,
  ctx: ActionContext,
): Promise<AccountResolution> {
  const { studioId, provider } = flow;
  const identity = identityKey(studioId, provider, profile.subject);
  const verifiedEmail = profile.emailVerified ? profile.email : null;
  const byEmail = verifiedEmail === null ? undefined : emailKey(studioId, verifiedEmail);

  return deps.lock.run([identity, ...(byEmail === undefined ? [] : [byEmail])], async () => {
    const accounts = deps.accounts();
    const linked = accounts.byIdentity.get(identity);
    if (linked !== undefined) return { kind: 'found', accountId: linked, linked: false };

    const sameEmail = byEmail === undefined ? undefined : accounts.byEmail.get(byEmail);
    if (sameEmail !== undefined) {
      await deps.commands.account(
        {
          type: 'LinkIdentity',
          accountId: sameEmail,
          provider,
          subject: profile.subject,
          email: verifiedEmail,
        },
        ctx.metadata,
      );
      return { kind: 'found', accountId: sameEmail, linked: true };
    }

    if (!maySignUp(deps.settings().STUDIO_OAUTH_SIGNUP, profile)) {
      return {
        kind: 'refused',
        message:
          'There is no account for you in this studio, and this gateway does not create accounts at sign-in. ' +
          'Ask an admin to create one with your email address, then sign in again.',
      };
    }
    const accountId = newId('acc');
    await deps.commands.account(
      {
        type: 'CreateAccount',
        accountId,
        studioId,
        email: verifiedEmail,
        name: profile.name,
        origin: 'oauth',
        sealedHash: null,
        link: { provider, subject: profile.subject },
      },
      ctx.metadata,
    );
    return { kind: 'created', accountId };
  });
}
