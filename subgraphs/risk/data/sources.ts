import type { EntityManager } from '@mikro-orm/core';
import { readRows } from '../services/read.ts';

/** What the stored crashes and counting stations are: real or generated, and which years. */
export interface DataSources {
  crashes: { source: string | null; sample: boolean; firstYear: number | null; lastYear: number | null };
  traffic: { sample: boolean };
}

/** Kept per database (keyed by the ORM's configuration) for a minute; a rebuild forgets it. */
const cache = new WeakMap<object, { value: DataSources; at: number }>();
const TTL_MS = 60_000;

export const forgetDataSources = (em: EntityManager) => cache.delete(em.config);

/** The data sets' description, from one small grouped query. */
export async function dataSources(em: EntityManager): Promise<DataSources> {
  const hit = cache.get(em.config);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.value;
  type Row = { kind: string; source: string; first: number | null; last: number | null };
  const rows = await readRows<Row>(em, 
    `select 'crashes' as kind, source, min(year) as first, max(year) as last from "risk"."risk_crashes" group by source
     union all select 'traffic' as kind, source, null, null from "risk"."risk_traffic_sensors" group by source`);
  const crashes = rows.filter((r) => r.kind === 'crashes');
  const fars = crashes.find((r) => r.source === 'fars');
  const years = crashes.flatMap((r) => [r.first, r.last]).filter((y): y is number => y !== null).map(Number);
  const firstYear = years.length ? Math.min(...years) : null;
  const lastYear = years.length ? Math.max(...years) : null;
  const span = firstYear === lastYear ? `${firstYear}` : `${firstYear}-${lastYear}`;
  const sample = crashes.some((r) => r.source === 'sample');
  const value: DataSources = {
    crashes: {
      source: !crashes.length ? null : fars && !sample ? `NHTSA FARS ${span}` : sample ? `Generated sample ${span}` : `Ingested crashes ${span}`,
      sample, firstYear, lastYear,
    },
    traffic: { sample: rows.some((r) => r.kind === 'traffic' && r.source === 'sample') },
  };
  cache.set(em.config, { value, at: Date.now() });
  return value;
}
