import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EntityManager } from '@mikro-orm/core';
import { RESCUE_SERVICES, RescuePlan, RescueProvider, TOW_LOCATION_TYPES, TowLocation, VehicleModel } from '../entities.ts';

/** The folder of the sample reference data shipped with the project. */
export const SAMPLE_DATA_DIR = new URL('.', import.meta.url).pathname;

interface ReferenceFiles {
  vehicles: { makes: Record<string, string[]> };
  providers: { providers: Omit<RescueProvider, 'active'>[] };
  towLocations: { locations: TowLocation[] };
  plans: { plans: RescuePlan[] };
}

const readJson = async <T>(dir: string, name: string): Promise<T> => JSON.parse(await readFile(join(dir, name), 'utf8')) as T;

function check(condition: boolean, message: string) {
  if (!condition) throw new Error(`roadside reference data: ${message}`);
}

/** Reads and sanity-checks the four files (vehicles.json, providers.json, tow-locations.json, plans.json). */
export async function readReferenceData(dir: string): Promise<ReferenceFiles> {
  const [vehicles, providers, towLocations, plans] = await Promise.all([
    readJson<ReferenceFiles['vehicles']>(dir, 'vehicles.json'),
    readJson<ReferenceFiles['providers']>(dir, 'providers.json'),
    readJson<ReferenceFiles['towLocations']>(dir, 'tow-locations.json'),
    readJson<ReferenceFiles['plans']>(dir, 'plans.json'),
  ]);
  for (const p of providers.providers) {
    check(p.services.every((s) => (RESCUE_SERVICES as readonly string[]).includes(s)), `provider ${p.providerId} has an unknown service`);
    check(Math.abs(p.latitude) <= 90 && Math.abs(p.longitude) <= 180, `provider ${p.providerId} has a bad position`);
  }
  for (const l of towLocations.locations) check((TOW_LOCATION_TYPES as readonly string[]).includes(l.type), `tow location ${l.locationId} has an unknown type`);
  return { vehicles, providers, towLocations, plans };
}

/**
 * Loads reference data idempotently: rows are upserted by their natural keys, so running it again
 * (every start) changes nothing, and a folder of real data can be loaded over the samples.
 */
export async function loadReferenceData(em: EntityManager, dir = SAMPLE_DATA_DIR) {
  const data = await readReferenceData(dir);
  const models = Object.entries(data.vehicles.makes).flatMap(([make, list]) => [...new Set(list)].map((model) => ({
    id: crypto.randomUUID(), makeKey: make.trim().toLowerCase(), make: make.trim(), modelKey: model.trim().toLowerCase(), model: model.trim(),
  })));
  await em.transactional(async (tx) => {
    await tx.upsertMany(VehicleModel, models, { onConflictFields: ['makeKey', 'modelKey'], onConflictAction: 'merge', onConflictMergeFields: ['make', 'model'], batchSize: 500 });
    await tx.upsertMany(RescueProvider, data.providers.providers.map((p) => ({ ...p, active: true })), { onConflictFields: ['providerId'] });
    await tx.upsertMany(TowLocation, data.towLocations.locations, { onConflictFields: ['locationId'] });
    await tx.upsertMany(RescuePlan, data.plans.plans, { onConflictFields: ['planCode'] });
  });
  return {
    makes: Object.keys(data.vehicles.makes).length, models: models.length, providers: data.providers.providers.length,
    towLocations: data.towLocations.locations.length, plans: data.plans.plans.length,
  };
}
