import type { EntityManager } from '@mikro-orm/core';

export type RiskDataStatus = 'loading' | 'ready' | 'failed';

interface Load { status: RiskDataStatus; done: Promise<void> }

/** The background load of each database (keyed by the ORM's configuration, shared by its forks). */
const loads = new WeakMap<object, Load>();

/** Follows a background load of the database's Risk Index data; resolves when it ends, either way. */
export function trackRiskDataLoad(em: EntityManager, load: Promise<void>, onFailure: (error: unknown) => void) {
  const entry: Load = { status: 'loading', done: Promise.resolve() };
  entry.done = load.then(
    () => { entry.status = 'ready'; },
    (error: unknown) => { entry.status = 'failed'; onFailure(error); },
  );
  loads.set(em.config, entry);
  return entry.done;
}

/** 'ready' when no background load was started (e.g. the ingest CLI) or it finished. */
export const riskDataStatus = (em: EntityManager): RiskDataStatus => loads.get(em.config)?.status ?? 'ready';
/** Resolves when the background load (if any) has finished, successfully or not. */
export const riskDataLoaded = (em: EntityManager) => loads.get(em.config)?.done ?? Promise.resolve();
