import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { studiosProjection } from '../../projections/studios.ts';
import { sha256Hex } from '../../shared/crypto.ts';
import type { GatewayContext } from '../../shared/gateway-context.ts';
import { ensurePrivateDir } from '../../shared/private-dir.ts';
import { tokenLookup } from '../gateway/gateway.ts';
import { issueToken, studioCommands } from '../studios/commands.ts';

export const LOCAL_STUDIO = 'local';
const TOKEN_FILE = 'runtime.token';

/**
 * Under `studio start` with no STUDIO_TOKEN, the runtime gets a `local` studio and a token of its
 * own on first start, kept in the data dir (0600), so the agent works with no set-up at all.
 */
export async function provisionLocalToken(gw: GatewayContext, dataDir: string): Promise<string> {
  const metadata = { actor: 'system' };
  const studios = studioCommands(gw);
  if (!gw.projections.state(studiosProjection).has(LOCAL_STUDIO))
    await studios({ type: 'CreateStudio', studioId: LOCAL_STUDIO, name: 'Local runtime' }, metadata);
  const path = join(dataDir, TOKEN_FILE);
  const kept = (await readFile(path, 'utf8').catch(() => '')).trim();
  const known = kept ? tokenLookup(gw).findByHash(sha256Hex(kept)) : undefined;
  if (known && !known.revoked && known.studioStatus === 'active') return kept;

  const { userToken: token } = await issueToken(
    studios,
    { studioId: LOCAL_STUDIO, name: 'local runtime', expiresAt: null, models: null },
    metadata,
  );
  // The data dir may not exist yet: with the memory store and both keys given, nothing else made it.
  await ensurePrivateDir(dataDir);
  await writeFile(path, `${token}\n`, { mode: 0o600 });
  return token;
}
