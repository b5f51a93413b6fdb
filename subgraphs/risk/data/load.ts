import { createReadStream, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate, setTimeout } from 'node:timers/promises';
import { createGunzip } from 'node:zlib';
import type { EntityManager } from '@mikro-orm/core';
import type { FastifyBaseLogger } from 'fastify';
import { Crash, CrashCell, TrafficSensor } from '../entities.ts';
import { rebuildAggregates } from './aggregate.ts';
import { forgetDataSources } from './sources.ts';
import { ingestFars } from './fars.ts';
import { restorePreparedRiskData } from './prepared.ts';
import { sampleSensors } from './samples.ts';
import { trackRiskDataLoad } from './status.ts';
import { ensureDataVersion } from './version.ts';

/** Sensors per insert: each carries two 168-value profiles, and PGlite holds the event loop for the whole statement. */
const BATCH = 50;

/** The real crashes shipped with the project (see its README): NHTSA FARS 2013-2015, California and Illinois. */
export const SHIPPED_FARS_FOLDER = new URL('./fars/', import.meta.url).pathname;
export const shippedFarsFiles = () => readdirSync(SHIPPED_FARS_FOLDER).filter((f) => /^accident_\d{4}\.csv\.gz$/.test(f)).sort().map((f) => join(SHIPPED_FARS_FOLDER, f));

/** Inserts in batches, giving the event loop back between them (PGlite runs each statement on it). */
export async function insertInBatches(em: EntityManager, entity: typeof TrafficSensor, rows: object[]) {
  for (let i = 0; i < rows.length; i += BATCH) {
    await em.insertMany(entity as never, rows.slice(i, i + BATCH) as never);
    await setImmediate();
  }
}

type Log = Pick<FastifyBaseLogger, 'info'>;

/** Loads the shipped FARS files through the FARS ingest path. Generated sample crashes are removed (never mixed with real ones). */
export async function loadShippedCrashes(em: EntityManager) {
  const summary = { read: 0, loaded: 0, noLocation: 0, outsideCoverage: 0, invalid: 0 };
  await em.nativeDelete(Crash, { source: 'sample' });
  for (const file of shippedFarsFiles()) {
    const s = await ingestFars(em, createReadStream(file).pipe(createGunzip()));
    summary.read += s.read; summary.loaded += s.loaded;
    summary.noLocation += s.skipped.noLocation; summary.outsideCoverage += s.skipped.outsideCoverage; summary.invalid += s.skipped.invalid;
  }
  return summary;
}

/** Advisory lock key: one process at a time brings the data in (several processes may share a PostgreSQL database). */
export const LOAD_LOCK = 4_031_978;

interface EnsureOptions {
  crashes?: boolean;
  lock?: boolean;
  /** PGlite: an empty risk schema takes the data prepared at install time (prepared.ts), when there are some. */
  prepared?: boolean;
}

/**
 * Brings the Risk Index data to the default: the prepared data into an empty database (`prepared`),
 * else the shipped real crashes when no FARS crash is stored
 * or no aggregate was ever built (a first load cut short), the generated (sample) counting stations
 * when no station is, and the aggregates when anything changed or none are stored. A start with everything in place costs three counts and a version check. With `lock`
 * (PostgreSQL) it runs in one transaction holding an advisory lock, so a second process starting at
 * the same time waits and then finds the data in place.
 */
export async function ensureRiskData(em: EntityManager, log?: Log, options: EnsureOptions = {}) {
  if (options.lock) {
    return em.transactional(async (tx) => {
      // Polled rather than waited on: a load outlasts the bounded statement time (DB_QUERY_TIMEOUT_MS).
      for (;;) {
        const [row] = await tx.getConnection().execute<{ ok: boolean }[]>('select pg_try_advisory_xact_lock(?) as ok', [LOAD_LOCK], 'all', tx.getTransactionContext());
        if (row?.ok) break;
        await setTimeout(500);
      }
      await bringIn(tx, log, options);
    });
  }
  return bringIn(em, log, options);
}

async function bringIn(em: EntityManager, log: Log | undefined, options: EnsureOptions) {
  await bringInData(em, log, options);
  // Data loaded before versions were recorded get one (a rebuild records a new one).
  await ensureDataVersion(em);
}

async function bringInData(em: EntityManager, log: Log | undefined, options: EnsureOptions) {
  const started = Date.now();
  if (options.prepared && (await em.count(Crash, {})) === 0 && (await em.count(TrafficSensor, {})) === 0 && await restorePreparedRiskData(em)) {
    forgetDataSources(em);
    log?.info({ ms: Date.now() - started }, 'risk: prepared NHTSA FARS 2013-2015 crashes and aggregates copied in');
    return;
  }
  let changed = false;
  // A first load cut short (the process stopped mid-way) leaves crashes without aggregates, which
  // are written last, in one transaction: load again, completing it (crashes are upserted by case).
  // The crashes are not written in one transaction: on PGlite it would hold every subgraph's queries.
  if (options.crashes !== false && ((await em.count(Crash, { source: 'fars' })) === 0 || (await em.count(CrashCell, {})) === 0)) {
    const loaded = await loadShippedCrashes(em);
    log?.info({ ...loaded, ms: Date.now() - started }, 'risk: NHTSA FARS 2013-2015 crashes loaded');
    changed = true;
  }
  if ((await em.count(TrafficSensor, {})) === 0) {
    const rows = sampleSensors();
    await em.transactional((tx) => insertInBatches(tx, TrafficSensor, rows));
    changed = true;
  }
  if (changed || (await em.count(CrashCell, {})) === 0) {
    const built = await rebuildAggregates(em);
    log?.info({ ...built, ms: Date.now() - started }, 'risk: aggregates built');
  }
}

/** Starts ensureRiskData without waiting for it: the subgraph answers meanwhile, saying the data are loading. */
export function startRiskDataLoad(em: EntityManager, log: Pick<FastifyBaseLogger, 'info' | 'error'>, options: EnsureOptions = {}) {
  return trackRiskDataLoad(em, ensureRiskData(em, log, options), (error) => log.error({ err: error }, 'risk: loading the data failed'));
}
