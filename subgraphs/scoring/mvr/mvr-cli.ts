/**
 * MVR key operations on the scoring database (DATABASE_URL, or DATA_DIR on the embedded default).
 *   npm run mvr -- status                    the current key id and record counts by key id
 *   npm run mvr -- rotate-key [--batch 200]  makes MVR_ENCRYPTION_KEY current and re-encrypts every
 *                                            record under it, in batches, while servers keep running
 * Before rotating, give every process the new key as MVR_ENCRYPTION_KEY and the old one in
 * MVR_ENCRYPTION_OLD_KEYS (the database decides which of them writes); remove the old key once done.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../../platform/config.ts';
import { openDatabase } from '../../platform/db/orm.ts';
import { refuseCleanly } from '../../platform/start-refused.ts';
import { scoring } from '../index.ts';
import { loadMvrKeyring } from './crypto.ts';
import { adoptKeyring, makeCurrent, recordsByKey, reencryptBatch } from './keyring-db.ts';

const { positionals, values } = parseArgs({ allowPositionals: true, options: { batch: { type: 'string', default: '200' } } });
const [command] = positionals;
if (command !== 'status' && command !== 'rotate-key') {
  console.error('Usage: npm run mvr -- status | rotate-key [--batch 200]');
  process.exit(2);
}
const batch = Number(values.batch);
if (!Number.isInteger(batch) || batch < 1 || batch > 10_000) {
  console.error('--batch must be an integer from 1 to 10000');
  process.exit(2);
}
const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
const db = await refuseCleanly(() => openDatabase(config, { name: scoring.name, entities: scoring.entities, migrationsPath: scoring.migrationsPath }));
const em = db.orm.em.fork();
/** How long a write that read the previous key may still take to commit. */
const SETTLE_MS = 2_000;
const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
let exitCode = 0;
try {
  const keyring = await loadMvrKeyring(config);
  await refuseCleanly(() => adoptKeyring(em, keyring));
  if (command === 'rotate-key') {
    const target = keyring.preferred;
    await makeCurrent(em, target);
    // A write that read the previous key just before the switch commits within moments: wait, then sweep until none is left.
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    let done = 0;
    for (let n = await reencryptBatch(db.orm.em, keyring, target, batch); n > 0; n = await reencryptBatch(db.orm.em, keyring, target, batch)) {
      done += n;
      print({ reencrypted: done });
    }
    print({ currentKey: target.keyId, reencrypted: done, recordsByKey: await recordsByKey(em) });
  } else {
    const state = await em.getConnection().execute('select key_id from "scoring"."mvr_key_state" where id = 1') as { key_id: string }[];
    print({ currentKey: state[0]?.key_id, processKeys: keyring.keyIds, recordsByKey: await recordsByKey(em) });
  }
} catch (error) {
  console.error((error as Error).message);
  exitCode = 1;
} finally {
  await db.close();
}
process.exit(exitCode);
