import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import { readOrCreateFile } from '../fs/atomic-file.ts';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Format byte, so the stored layout can change later without guessing. */
const FORMAT_V1 = 1;

/**
 * Encrypts personal data at rest (MVR reports in scoring; the gateway's stored idempotent responses,
 * under a key derived from the same one) with AES-256-GCM. Stored layout: version (1 byte) | IV (12) |
 * auth tag (16) | ciphertext. The record id is bound in as additional data, so a ciphertext copied
 * onto another row does not decrypt.
 */
export class ReportVault {
  private readonly key: Buffer;
  /** A short fingerprint of the key (not the key), stored with each row to allow rotation later. */
  readonly keyId: string;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('the MVR encryption key must be 32 bytes (base64 of 32 random bytes)');
    this.key = key;
    this.keyId = createHash('sha256').update(key).digest('hex').slice(0, 16);
  }

  /** A value derived from the key that proves, when stored, which key a database's records use (never the key itself). */
  checkValue(): string {
    return createHmac('sha256', this.key).update('fleet-risk-graph MVR key check').digest('hex');
  }

  encrypt(plaintext: string, recordId: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.key, iv);
    cipher.setAAD(Buffer.from(recordId, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([FORMAT_V1]), iv, cipher.getAuthTag(), body]);
  }

  decrypt(stored: Buffer | Uint8Array, recordId: string): string {
    const data = Buffer.from(stored);
    if (data[0] !== FORMAT_V1) throw new Error('unknown MVR ciphertext format');
    const iv = data.subarray(1, 1 + IV_BYTES);
    const tag = data.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv(ALGORITHM, this.key, iv);
    decipher.setAAD(Buffer.from(recordId, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(data.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}

export function decodeKey(base64: string, variable = 'MVR_ENCRYPTION_KEY'): Buffer {
  const key = Buffer.from(base64.trim(), 'base64');
  if (key.length !== 32) throw new Error(`${variable} must be the base64 of exactly 32 bytes`);
  return key;
}

/**
 * The key: MVR_ENCRYPTION_KEY (base64, 32 bytes) when set, otherwise 32 random bytes generated once
 * into DATA_DIR/keys/mvr-encryption.key (mode 0600, created atomically), so the embedded default
 * survives restarts. Other personal data kept at rest (the gateway's stored idempotent responses)
 * uses a key derived from it.
 */
export async function loadMvrKey(config: Config): Promise<Buffer> {
  if (config.MVR_ENCRYPTION_KEY) return decodeKey(config.MVR_ENCRYPTION_KEY);
  return decodeKey(await readOrCreateFile(join(config.dataDir, 'keys', 'mvr-encryption.key'), () => `${randomBytes(32).toString('base64')}\n`));
}

export const loadReportVault = async (config: Config): Promise<ReportVault> => new ReportVault(await loadMvrKey(config));
