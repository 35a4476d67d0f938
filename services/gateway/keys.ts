import type { ProcessConfig } from '../../shared/config.ts';
import { parseMasterKey, SecretBox } from '../../shared/crypto.ts';
import { generateHexKey, readOrCreateKeyFile } from '../../shared/key-files.ts';

export interface GatewayKeys {
  adminKey: string;
  /** Where the admin key is, for the start banner: the env variable or the file. */
  adminKeySource: string;
  secrets: SecretBox;
}

/** The admin key and the master key: from the environment, else generated once into the data dir (0600). */
export async function loadKeys(config: ProcessConfig): Promise<GatewayKeys> {
  let adminKey = config.adminSecretKey;
  let adminKeySource = 'ADMIN_SECRET_KEY';
  if (adminKey === undefined) {
    const file = await readOrCreateKeyFile(config.dataDir, 'admin.key');
    if (file.value.length < 32) throw new Error(`${file.path} holds a key shorter than 32 characters`);
    adminKey = file.value;
    adminKeySource = file.path;
  }
  const master =
    config.masterKey ?? (await readOrCreateKeyFile(config.dataDir, 'master.key', generateHexKey)).value;
  return { adminKey, adminKeySource, secrets: new SecretBox(parseMasterKey(master)) };
}
