import { inMemoryConfig } from '../../platform/config.ts';
import { TEMPLATE_DIR } from '../../platform/db/cluster-template.ts';
import { openDatabase } from '../../platform/db/orm.ts';
import { riskEntities } from '../entities.ts';
import { ensureRiskData } from './load.ts';
import { dumpRiskData, writePreparedRiskData } from './prepared.ts';

export const RISK_MIGRATIONS = new URL('../migrations', import.meta.url).pathname;

/** Makes the prepared Risk Index data (see prepared.ts) when missing: a full load into an in-memory cluster, copied out. */
export function prepareRiskData(folder = TEMPLATE_DIR): Promise<string> {
  return writePreparedRiskData(async () => {
    const config = inMemoryConfig();
    const db = await openDatabase(config, { name: 'risk', entities: riskEntities, migrationsPath: RISK_MIGRATIONS });
    try {
      await ensureRiskData(db.orm.em.fork());
      return await dumpRiskData(db.orm.em.fork());
    } finally {
      await db.close();
    }
  }, folder);
}
