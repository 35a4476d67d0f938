import { type AccountsState, accountsProjection } from '../../projections/accounts.ts';
import { type StudioRecord, studiosProjection } from '../../projections/studios.ts';
import { type CommandHandler, commandHandler } from '../../shared/command-handler.ts';
import { type AccountsEnv, ConfigError, parseAccountsEnv } from '../../shared/config.ts';
import { ApiError } from '../../shared/errors.ts';
import type { GatewayContext } from '../../shared/gateway-context.ts';
import type { ActionContext } from '../../shared/http/action.ts';
import { clientKeyOf } from '../../shared/http/client-key.ts';
import { KeyedLock } from '../../shared/keyed-lock.ts';
import { EnvReader } from '../env/reader.ts';
import { studioCommands } from '../studios/commands.ts';
import {
  type AccountCommand,
  type AccountEvent,
  type AccountState,
  accountDecider,
  accountStreamId,
} from './account.ts';
import { type OAuthCommand, type OAuthEvent, type OAuthState, oauthDecider, oauthStreamId } from './oauth.ts';
import { Passwords } from './passwords.ts';
import { builtinSignInProviders } from './providers/index.ts';
import type { EnvGet, OAuthProvider, ProviderId } from './providers/types.ts';
import { type AccountAttemptLimits, accountAttemptLimits } from './rate-limits.ts';

/** What every action of the accounts service uses. */
export interface AccountsDeps {
  gw: GatewayContext;
  env: EnvGet;
  /** The accounts settings as the env says now (`env upsert` applies at once). */
  settings(): AccountsEnv;
  passwords: Passwords;
  attemptLimits: AccountAttemptLimits;
  providers: Map<ProviderId, OAuthProvider>;
  lock: KeyedLock;
  accounts(): AccountsState;
  /** The studio, or undefined when there is none with this id. */
  studio(id: string): StudioRecord | undefined;
  /** The command handlers of the aggregates accounts write to: each answers once the read models show it. */
  commands: {
    account: CommandHandler<AccountCommand, AccountEvent, AccountState>;
    oauth: CommandHandler<OAuthCommand, OAuthEvent, OAuthState>;
    studio: ReturnType<typeof studioCommands>;
  };
}

export function accountsDeps(gw: GatewayContext): AccountsDeps {
  const reader = new EnvReader(gw);
  const env: EnvGet = (key) => reader.get(key);
  const passwords = new Passwords(gw.secrets);
  void passwords.warmUp();
  return {
    gw,
    env,
    settings() {
      try {
        return parseAccountsEnv(env);
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        gw.logger.error({ err: error }, 'the accounts settings in env are invalid');
        throw new ApiError(
          'internal_error',
          'the sign-in settings of this gateway are invalid (see its log)',
        );
      }
    },
    passwords,
    attemptLimits: accountAttemptLimits(gw.counters, (key) => gw.secrets.mac('rate-limit-key', key)),
    providers: builtinSignInProviders(),
    lock: new KeyedLock(),
    accounts: () => gw.projections.state(accountsProjection),
    studio(id) {
      return gw.projections.state(studiosProjection).get(id);
    },
    commands: {
      account: commandHandler(accountDecider, {
        events: gw.events,
        streamOf: (command: AccountCommand) => accountStreamId(command.accountId),
        readModels: gw.projections,
      }),
      oauth: commandHandler(oauthDecider, {
        events: gw.events,
        streamOf: (command: OAuthCommand) => oauthStreamId(command.flowId),
        readModels: gw.projections,
      }),
      studio: studioCommands(gw),
    },
  };
}

/** The caller's address (IPv4 without its IPv6 mapping; behind a trusted proxy, the client's), as the audit records it. */
export function clientAddress(ctx: ActionContext): string {
  return ctx.req.clientAddress;
}

/** The key of per-address rate limits: the address, or its /64 for IPv6 (one host has a whole /64). */
export function clientLimitKey(ctx: ActionContext): string {
  return clientKeyOf(ctx.req.clientAddress);
}
