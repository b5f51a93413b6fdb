import type { Config } from '../../platform/config.ts';
import { decodeKey, loadReportVault, ReportVault } from '../../platform/crypto/vault.ts';

/**
 * The keys a process can read MVRs with, by key id. The database says which one new records are
 * written with (mvr/keyring-db.ts); `preferred` is the one a new database starts with and the one
 * `npm run mvr -- rotate-key` makes current.
 */
export class MvrKeyring {
  readonly preferred: ReportVault;
  private readonly vaults = new Map<string, ReportVault>();

  constructor(preferred: ReportVault, older: ReportVault[] = []) {
    this.preferred = preferred;
    for (const vault of [preferred, ...older]) this.vaults.set(vault.keyId, vault);
  }

  get keyIds(): string[] { return [...this.vaults.keys()]; }

  has(keyId: string): boolean { return this.vaults.has(keyId); }

  vault(keyId: string): ReportVault {
    const vault = this.vaults.get(keyId);
    if (!vault) throw new Error(`this process does not hold MVR key ${keyId}`);
    return vault;
  }
}

/** The preferred key (MVR_ENCRYPTION_KEY, or the generated key file) and the older ones still read (MVR_ENCRYPTION_OLD_KEYS, comma-separated). */
export async function loadMvrKeyring(config: Config): Promise<MvrKeyring> {
  const older = (config.MVR_ENCRYPTION_OLD_KEYS ?? '').split(',').map((k) => k.trim()).filter(Boolean)
    .map((k) => new ReportVault(decodeKey(k, 'each of MVR_ENCRYPTION_OLD_KEYS')));
  return new MvrKeyring(await loadReportVault(config), older);
}

/**
 * The keyring of each database: registered when the subgraph starts (index.ts onStart) and found
 * again from any EntityManager forked from it, so no key lives in a module-level singleton.
 */
const keyrings = new WeakMap<object, MvrKeyring>();

export const registerKeyring = (em: { config: object }, keyring: MvrKeyring) => { keyrings.set(em.config, keyring); };

export function keyringFor(em: { config: object }): MvrKeyring {
  const keyring = keyrings.get(em.config);
  if (!keyring) throw new Error('the MVR encryption keys were not loaded for this database');
  return keyring;
}
