import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exportPKCS8, exportSPKI, generateKeyPair, importPKCS8, importSPKI, type CryptoKey } from 'jose';
import type { Config } from '../config.ts';

export const JWT_ALG = 'EdDSA';

export interface SigningKeys {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}

// Every subgraph of the embedded default asks at once on a first start: callers share the load in
// flight for a folder, or one could read the other's half-written file.
const inFlight = new Map<string, Promise<SigningKeys>>();

/**
 * The token keys: from JWT_PRIVATE_KEY / JWT_PUBLIC_KEY (PEM) when set, otherwise an Ed25519 pair
 * generated once and kept under DATA_DIR/keys so tokens survive restarts of the embedded default.
 */
export async function loadSigningKeys(config: Config): Promise<SigningKeys> {
  if (config.JWT_PRIVATE_KEY && config.JWT_PUBLIC_KEY) {
    return {
      privateKey: await importPKCS8(config.JWT_PRIVATE_KEY, JWT_ALG),
      publicKey: await importSPKI(config.JWT_PUBLIC_KEY, JWT_ALG),
    };
  }
  const dir = join(config.dataDir, 'keys');
  let keys = inFlight.get(dir);
  if (!keys) {
    keys = keysIn(dir).finally(() => inFlight.delete(dir));
    inFlight.set(dir, keys);
  }
  return keys;
}

async function keysIn(dir: string): Promise<SigningKeys> {
  const privatePath = join(dir, 'jwt-private.pem');
  const publicPath = join(dir, 'jwt-public.pem');
  try {
    const [priv, pub] = await Promise.all([readFile(privatePath, 'utf8'), readFile(publicPath, 'utf8')]);
    return { privateKey: await importPKCS8(priv, JWT_ALG), publicKey: await importSPKI(pub, JWT_ALG) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const pair = await generateKeyPair(JWT_ALG, { extractable: true });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // 'wx' fails if another process wrote the pair first; then read theirs.
  try {
    await writeFile(privatePath, await exportPKCS8(pair.privateKey), { flag: 'wx', mode: 0o600 });
    await writeFile(publicPath, await exportSPKI(pair.publicKey), { flag: 'wx', mode: 0o644 });
    return pair;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return keysIn(dir);
  }
}
