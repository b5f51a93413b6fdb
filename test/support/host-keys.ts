import { randomBytes } from 'node:crypto';
import { exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import { generateHopKey } from '../../subgraphs/platform/internal-hop.ts';

/**
 * The keys of a deployment on several hosts, as `npm run keys` makes them and compose hands them out:
 * what every host's environment holds, and what the gateway's alone does (the private keys).
 */
export async function hostKeys() {
  const tokens = await generateKeyPair('EdDSA', { extractable: true });
  const internal = await generateKeyPair('EdDSA', { extractable: true });
  return {
    everyHost: {
      INTERNAL_HOP_KEY: generateHopKey(), INTERNAL_TOKEN_PUBLIC_KEY: await exportSPKI(internal.publicKey),
      MVR_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    },
    gatewayOnly: {
      JWT_PRIVATE_KEY: await exportPKCS8(tokens.privateKey), JWT_PUBLIC_KEY: await exportSPKI(tokens.publicKey),
      INTERNAL_TOKEN_PRIVATE_KEY: await exportPKCS8(internal.privateKey),
    },
  };
}
