import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { studiosProjection } from '../../projections/studios.ts';
import { newId, newUserToken, sha256Hex } from '../../shared/crypto.ts';
import { handleCommand } from '../../shared/decider.ts';
import { awaitReadModels, type GatewayContext } from '../../shared/gateway-context.ts';
import { ensurePrivateDir } from '../../shared/private-dir.ts';
import { tokenLookup } from '../gateway/gateway.ts';
import { studioDecider, studioStreamId } from '../studios/studio.ts';

export const LOCAL_STUDIO = 'local';
const TOKEN_FILE = 'runtime.token';

/**
 * Under `studio start` with no STUDIO_TOKEN, the runtime gets a `local` studio and a token of its
 * own on first start, kept in the data dir (0600), so the agent works with no set-up at all.
 */
export async function provisionLocalToken(gw: GatewayContext, dataDir: string): Promise<string> {
  const metadata = { actor: 'system' };
  if (!gw.projections.state(studiosProjection).has(LOCAL_STUDIO)) {
    const created = await handleCommand(
      gw.events,
      studioStreamId(LOCAL_STUDIO),
      studioDecider,
      { type: 'CreateStudio', studioId: LOCAL_STUDIO, name: 'Local runtime' },
      metadata,
    );
    await awaitReadModels(gw, created.position);
  }
  const path = join(dataDir, TOKEN_FILE);
  const kept = (await readFile(path, 'utf8').catch(() => '')).trim();
  const known = kept ? tokenLookup(gw).findByHash(sha256Hex(kept)) : undefined;
  if (known && !known.revoked && known.studioStatus === 'active') return kept;

  const token = newUserToken();
  const issued = await handleCommand(
    gw.events,
    studioStreamId(LOCAL_STUDIO),
    studioDecider,
    {
      type: 'IssueToken',
      studioId: LOCAL_STUDIO,
      tokenId: newId('tok'),
      name: 'local runtime',
      prefix: token.slice(0, 8),
      tokenHash: sha256Hex(token),
      expiresAt: null,
      models: null,
    },
    metadata,
  );
  await awaitReadModels(gw, issued.position);
  // The data dir may not exist yet: with the memory store and both keys given, nothing else made it.
  await ensurePrivateDir(dataDir);
  await writeFile(path, `${token}\n`, { mode: 0o600 });
  return token;
}
