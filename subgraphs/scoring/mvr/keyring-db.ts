import { LockMode, type EntityManager } from '@mikro-orm/core';
import { AppError } from '../../platform/errors.ts';
import { StartRefused } from '../../platform/start-refused.ts';
import { MvrRecord } from '../entities.ts';
import type { ReportVault } from '../../platform/crypto/vault.ts';
import type { MvrKeyring } from './crypto.ts';

/**
 * The database's record of its MVR key (one row): which key new records are written with, and a
 * check value of that key, so a process holding another key is refused at start instead of failing
 * every read later. Each record carries the id of the key that encrypted it.
 */
const STATE = '"scoring"."mvr_key_state"';

interface KeyState { key_id: string; check_value: string }

const readState = async (em: EntityManager): Promise<KeyState | undefined> =>
  (await em.getConnection().execute(`select key_id, check_value from ${STATE} where id = 1`) as KeyState[])[0];

/** Key ids that encrypt at least one record, with their record counts. */
export async function recordsByKey(em: EntityManager): Promise<Record<string, number>> {
  const rows = await em.getConnection().execute('select key_id, count(*) as n from "scoring"."mvr_records" group by key_id') as { key_id: string; n: string | number }[];
  return Object.fromEntries(rows.map((r) => [r.key_id, Number(r.n)]));
}

const describeKeys = (keyring: MvrKeyring) => `this process holds ${keyring.keyIds.join(', ')} (MVR_ENCRYPTION_KEY, else DATA_DIR/keys/mvr-encryption.key, plus MVR_ENCRYPTION_OLD_KEYS)`;

/**
 * At start: records the preferred key as current in a new database, then refuses (StartRefused)
 * when this process lacks the database's current key (or its check value differs), or any key that
 * still encrypts records.
 */
export async function adoptKeyring(em: EntityManager, keyring: MvrKeyring): Promise<void> {
  const { preferred } = keyring;
  await em.getConnection().execute(`insert into ${STATE} (id, key_id, check_value, updated_at) values (1, ?, ?, now()) on conflict (id) do nothing`, [preferred.keyId, preferred.checkValue()]);
  const state = (await readState(em))!;
  const fix = 'Give this process the key the other processes use: on PostgreSQL with several processes, the same MVR_ENCRYPTION_KEY in every environment (a per-process key file diverges).';
  if (!keyring.has(state.key_id) || keyring.vault(state.key_id).checkValue() !== state.check_value) {
    throw new StartRefused(`the database's MVR records are written with key ${state.key_id}, and ${describeKeys(keyring)}. ${fix}`);
  }
  const unreadable = Object.keys(await recordsByKey(em)).filter((id) => !keyring.has(id));
  if (unreadable.length) {
    throw new StartRefused(`MVR records in the database are encrypted with key(s) ${unreadable.join(', ')}, and ${describeKeys(keyring)}. ${fix} During a rotation, keep the old key in MVR_ENCRYPTION_OLD_KEYS until \`npm run mvr -- rotate-key\` has finished.`);
  }
}

/** The key new records are written with now (read per write, so a rotation takes effect on every process at once). */
export async function currentVault(em: EntityManager, keyring: MvrKeyring): Promise<ReportVault> {
  const state = await readState(em);
  if (state && keyring.has(state.key_id)) return keyring.vault(state.key_id);
  throw new AppError('SERVICE_UNAVAILABLE', 'MVR storage is being re-keyed and this process lacks the new key; retry shortly');
}

/** Makes `vault` the key new records are written with. */
export async function makeCurrent(em: EntityManager, vault: ReportVault): Promise<void> {
  await em.getConnection().execute(`update ${STATE} set key_id = ?, check_value = ?, updated_at = now() where id = 1`, [vault.keyId, vault.checkValue()]);
}

/**
 * Re-encrypts up to `size` records not under `target` in one transaction (rows locked, skipping
 * rows another re-encryption holds); returns how many it did. Readers are never blocked: each row
 * is valid under its key id before and after.
 */
export async function reencryptBatch(em: EntityManager, keyring: MvrKeyring, target: ReportVault, size: number): Promise<number> {
  return em.fork().transactional(async (tx) => {
    const records = await tx.find(MvrRecord, { keyId: { $ne: target.keyId } }, { filters: false, limit: size, orderBy: { seq: 'asc' }, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE });
    for (const record of records) {
      const text = keyring.vault(record.keyId).decrypt(record.reportCiphertext as Buffer, record.id);
      record.reportCiphertext = target.encrypt(text, record.id);
      record.keyId = target.keyId;
    }
    return records.length;
  });
}
