import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { loadReportVault, ReportVault } from '../../subgraphs/platform/crypto/vault.ts';

let dir: string;
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'frg-mvr-key-')); });
afterAll(async () => { await rm(dir, { recursive: true, force: true }); });

const configFor = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', DATA_DIR: dir, ...env });
const report = '{"license_number":"D1234567","driver":{"dateOfBirth":"1988-02-11"}}';

describe('MVR encryption at rest (AES-256-GCM)', () => {
  it('round-trips, with a fresh IV each time and no plaintext in the ciphertext', () => {
    const vault = new ReportVault(randomBytes(32));
    const a = vault.encrypt(report, 'rec-1');
    const b = vault.encrypt(report, 'rec-1');
    expect(a.equals(b)).toBe(false);
    expect(a.toString('latin1')).not.toContain('D1234567');
    expect(a.toString('latin1')).not.toContain('1988-02-11');
    expect(vault.decrypt(a, 'rec-1')).toBe(report);
  });

  it('refuses a ciphertext moved to another record, tampered with, or read with another key', () => {
    const vault = new ReportVault(randomBytes(32));
    const sealed = vault.encrypt(report, 'rec-1');
    expect(() => vault.decrypt(sealed, 'rec-2')).toThrow();
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1] ^= 1;
    expect(() => vault.decrypt(tampered, 'rec-1')).toThrow();
    expect(() => new ReportVault(randomBytes(32)).decrypt(sealed, 'rec-1')).toThrow();
  });

  it('takes the key from MVR_ENCRYPTION_KEY, and refuses one that is not 32 bytes', async () => {
    const key = randomBytes(32);
    const vault = await loadReportVault(configFor({ MVR_ENCRYPTION_KEY: key.toString('base64') }));
    expect(new ReportVault(key).decrypt(vault.encrypt(report, 'r'), 'r')).toBe(report);
    await expect(loadReportVault(configFor({ MVR_ENCRYPTION_KEY: randomBytes(16).toString('base64') }))).rejects.toThrow(/32 bytes/);
  });

  it('otherwise generates a key once under DATA_DIR/keys (mode 0600) and reuses it', async () => {
    const first = await loadReportVault(configFor({}));
    const path = join(dir, 'keys', 'mvr-encryption.key');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(Buffer.from((await readFile(path, 'utf8')).trim(), 'base64')).toHaveLength(32);
    const second = await loadReportVault(configFor({}));
    expect(second.keyId).toBe(first.keyId);
    expect(second.decrypt(first.encrypt(report, 'r'), 'r')).toBe(report);
  });
});
