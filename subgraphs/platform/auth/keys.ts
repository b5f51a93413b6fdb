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

/** The SPKI PEM of a private key's public half, or of a public key (normalised). */
const publicPemOf = (pem: string) => createPublicKey(pem).export({ type: 'spki', format: 'pem' }).toString();

/**
 * An Ed25519 private key (PEM) generated once into DATA_DIR/keys/`file`, created atomically: processes
 * starting together on one keys folder read the same whole key.
 */
const storedPrivateKey = (config: Config, file: string) => readOrCreateFile(join(config.dataDir, 'keys', file), async () =>
  exportPKCS8((await generateKeyPair(JWT_ALG, { extractable: true })).privateKey));

const importPair = async (privatePem: string, publicPem = publicPemOf(privatePem)): Promise<SigningKeys> =>
  ({ privateKey: await importPKCS8(privatePem, JWT_ALG), publicKey: await importSPKI(publicPem, JWT_ALG) });

/**
 * The access token keys (the gateway's): from JWT_PRIVATE_KEY / JWT_PUBLIC_KEY (PEM) when set, otherwise
 * an Ed25519 private key generated once into DATA_DIR/keys/jwt-private.pem; the public key is derived from it.
 */
export async function loadSigningKeys(config: Config): Promise<SigningKeys> {
  if (config.JWT_PRIVATE_KEY && config.JWT_PUBLIC_KEY) return importPair(config.JWT_PRIVATE_KEY, config.JWT_PUBLIC_KEY);
  return importPair(await storedPrivateKey(config, 'jwt-private.pem'));
}

const INTERNAL_TOKEN_FILE = 'internal-token-private.pem';

/**
 * The key the gateway signs internal tokens with (auth/internal-token.ts): INTERNAL_TOKEN_PRIVATE_KEY, or an
 * Ed25519 key generated once into DATA_DIR/keys/internal-token-private.pem. A configured public key must be its own.
 */
export async function loadInternalSigningKey(config: Config): Promise<CryptoKey> {
  const configured = config.INTERNAL_TOKEN_PRIVATE_KEY;
  if (!configured && config.INTERNAL_TOKEN_PUBLIC_KEY) {
    throw new Error('INTERNAL_TOKEN_PUBLIC_KEY is set without INTERNAL_TOKEN_PRIVATE_KEY: '
      + 'the gateway signs internal tokens with the private key of that pair (npm run keys prints both)');
  }
  const privatePem = configured ?? await storedPrivateKey(config, INTERNAL_TOKEN_FILE);
  if (config.INTERNAL_TOKEN_PUBLIC_KEY && publicPemOf(config.INTERNAL_TOKEN_PUBLIC_KEY) !== publicPemOf(privatePem)) {
    throw new Error('INTERNAL_TOKEN_PUBLIC_KEY is not the public key of INTERNAL_TOKEN_PRIVATE_KEY');
  }
  return importPKCS8(privatePem, JWT_ALG);
}

/**
 * The key a subgraph verifies internal tokens with: INTERNAL_TOKEN_PUBLIC_KEY (all a subgraph on its own needs),
 * else derived from INTERNAL_TOKEN_PRIVATE_KEY or from the key stored under DATA_DIR (the embedded default, and
 * compose's shared keys volume, where whichever process starts first generates it).
 */
export async function loadInternalVerifyingKey(config: Config): Promise<CryptoKey> {
  if (config.INTERNAL_TOKEN_PUBLIC_KEY) return importSPKI(config.INTERNAL_TOKEN_PUBLIC_KEY, JWT_ALG);
  return importSPKI(publicPemOf(config.INTERNAL_TOKEN_PRIVATE_KEY ?? await storedPrivateKey(config, INTERNAL_TOKEN_FILE)), JWT_ALG);
}
