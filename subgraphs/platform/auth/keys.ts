import { createPublicKey } from 'node:crypto';
import { join } from 'node:path';
import { exportPKCS8, generateKeyPair, importPKCS8, importSPKI, type CryptoKey } from 'jose';
import type { Config } from '../config.ts';
import { readOrCreateFile } from '../fs/atomic-file.ts';

export const JWT_ALG = 'EdDSA';

export interface SigningKeys {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}

/**
 * The token keys: from JWT_PRIVATE_KEY / JWT_PUBLIC_KEY (PEM) when set, otherwise an Ed25519
 * private key generated once into DATA_DIR/keys/jwt-private.pem (created atomically, so processes
 * starting together on one keys folder all read the same whole key); the public key is derived from it.
 */
export async function loadSigningKeys(config: Config): Promise<SigningKeys> {
  if (config.JWT_PRIVATE_KEY && config.JWT_PUBLIC_KEY) {
    return {
      privateKey: await importPKCS8(config.JWT_PRIVATE_KEY, JWT_ALG),
      publicKey: await importSPKI(config.JWT_PUBLIC_KEY, JWT_ALG),
    };
  }
  const privatePem = await readOrCreateFile(join(config.dataDir, 'keys', 'jwt-private.pem'), async () =>
    exportPKCS8((await generateKeyPair(JWT_ALG, { extractable: true })).privateKey));
  const publicPem = createPublicKey(privatePem).export({ type: 'spki', format: 'pem' }).toString();
  return { privateKey: await importPKCS8(privatePem, JWT_ALG), publicKey: await importSPKI(publicPem, JWT_ALG) };
}
