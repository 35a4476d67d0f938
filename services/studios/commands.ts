import { type CommandHandler, commandHandler } from '../../shared/command-handler.ts';
import { newId, newUserToken, sha256Hex } from '../../shared/crypto.ts';
import type { EventMetadata } from '../../shared/event-store/types.ts';
import type { GatewayContext } from '../../shared/gateway-context.ts';
import {
  type StudioCommand,
  type StudioEvent,
  type StudioState,
  studioDecider,
  studioStreamId,
} from './studio.ts';

// The studio aggregate's command handler: it answers once the gateway's read models show its write.

export const studioCommands = (gw: GatewayContext) =>
  commandHandler(studioDecider, {
    events: gw.events,
    streamOf: (command: StudioCommand) => studioStreamId(command.studioId),
    readModels: gw.projections,
  });

export interface NewToken {
  studioId: string;
  name: string;
  expiresAt: string | null;
  /** Model ids or patterns the token may call; null: every model. */
  models: readonly string[] | null;
  /** The MCP tools it may call (`<server>__<tool>` or patterns); left out: none. */
  tools?: readonly string[];
  tokenId?: string;
}

/**
 * Issues a user token, the one way every token is made (an admin's `tokens/apply`, an account's
 * sign-in, the local runtime's own): a `TokenIssued` event in the studio's stream keeps its hash and
 * first characters only; the token itself is answered here, once.
 */
export async function issueToken(
  run: CommandHandler<StudioCommand, StudioEvent, StudioState>,
  token: NewToken,
  metadata: EventMetadata,
): Promise<{ userToken: string; tokenId: string }> {
  const userToken = newUserToken();
  const tokenId = token.tokenId ?? newId('tok');
  await run(
    {
      type: 'IssueToken',
      studioId: token.studioId,
      tokenId,
      name: token.name,
      prefix: userToken.slice(0, 8),
      tokenHash: sha256Hex(userToken),
      expiresAt: token.expiresAt,
      models: token.models,
      ...(token.tools === undefined ? {} : { tools: token.tools }),
    },
    metadata,
  );
  return { userToken, tokenId };
}
