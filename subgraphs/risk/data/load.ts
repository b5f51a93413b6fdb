import type { EntityManager } from '@mikro-orm/core';
import type { FastifyBaseLogger } from 'fastify';
import { Crash, CrashCell, TrafficSensor } from '../entities.ts';
import { rebuildAggregates } from './aggregate.ts';
import { sampleCrashes, sampleSensors } from './samples.ts';

const BATCH = 500;

export async function insertInBatches(em: EntityManager, entity: typeof Crash | typeof TrafficSensor, rows: object[], upsert = false) {
  for (let i = 0; i < rows.length; i += BATCH) {
    const batch = rows.slice(i, i + BATCH) as never;
    if (upsert) await em.upsertMany(entity as never, batch, { disableIdentityMap: true } as never);
    else await em.insertMany(entity as never, batch);
  }
}

/** Loads the generated sample into each empty table, then (re)builds the aggregates when anything changed. */
export async function ensureSampleData(em: EntityManager, log?: Pick<FastifyBaseLogger, 'info'>, options: { crashes?: boolean } = {}) {
  const started = Date.now();
  let changed = false;
  if (options.crashes !== false && (await em.count(Crash, {})) === 0) {
    const rows = sampleCrashes();
    await em.transactional((tx) => insertInBatches(tx, Crash, rows));
    changed = true;
  }
  if ((await em.count(TrafficSensor, {})) === 0) {
    const rows = sampleSensors();
    await em.transactional((tx) => insertInBatches(tx, TrafficSensor, rows));
    changed = true;
  }
  if (changed || (await em.count(CrashCell, {})) === 0) {
    const built = await rebuildAggregates(em);
    log?.info({ ...built, ms: Date.now() - started }, 'risk sample data loaded and aggregated');
  }
}
