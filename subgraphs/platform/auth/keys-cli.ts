/**
 * `npm run keys`: a fresh set of the keys every process of one deployment shares, as an environment
 * file the configuration reads as is (PEM keys on one line with `\n` escapes):
 *   npm run keys -- keys.env                 writes the file (mode 0600; an existing file is left alone)
 *   npm run keys                             prints it (npm adds its own header lines: --silent to pipe it)
 *   set -a && . ./keys.env && set +a         loads it into a shell; docker compose reads it as `.env`
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import { generateHopKey } from '../internal-hop.ts';
import { JWT_ALG } from './keys.ts';

const { privateKey, publicKey } = await generateKeyPair(JWT_ALG, { extractable: true });
const internal = await generateKeyPair(JWT_ALG, { extractable: true });
const oneLine = (pem: string) => pem.trim().replaceAll('\n', '\\n');

// Single quotes: taken literally by a shell, docker compose's env files and Node's --env-file alike.
const block = [
  `# Made by npm run keys on ${new Date().toISOString()}: give every gateway process these same values, and every subgraph`,
  '# on its own the same MVR, hop and internal token public key (it needs neither private key; extra ones are unused).',
  '# Access tokens: Ed25519 pair (the gateway signs and verifies them; subgraphs never see them).',
  `JWT_PRIVATE_KEY='${oneLine(await exportPKCS8(privateKey))}'`,
  `JWT_PUBLIC_KEY='${oneLine(await exportSPKI(publicKey))}'`,
  '# Internal tokens (who calls, gateway -> subgraph): Ed25519 pair; the gateway needs the private key, a subgraph only the public one.',
  `INTERNAL_TOKEN_PRIVATE_KEY='${oneLine(await exportPKCS8(internal.privateKey))}'`,
  `INTERNAL_TOKEN_PUBLIC_KEY='${oneLine(await exportSPKI(internal.publicKey))}'`,
  '# Stored MVR reports and idempotent responses: AES-256-GCM key (base64 of 32 bytes).',
  `MVR_ENCRYPTION_KEY='${randomBytes(32).toString('base64')}'`,
  '# The gateway -> subgraph hop (HMAC-SHA256), required wherever a subgraph listens (docker compose, <NAME>_URL).',
  `INTERNAL_HOP_KEY='${generateHopKey()}'`,
  '',
].join('\n');

const file = process.argv[2];
if (!file) process.stdout.write(block);
else {
  await writeFile(file, block, { flag: 'wx', mode: 0o600 }).catch((error: NodeJS.ErrnoException) => {
    process.stderr.write(error.code === 'EEXIST' ? `${file} exists: not overwritten (its keys may be in use); remove it or name another file\n` : `${error.message}\n`);
    process.exit(1);
  });
  process.stderr.write(`Wrote ${file} (readable by you only). Give every process of the deployment these values.\n`);
}
