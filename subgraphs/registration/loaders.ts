import DataLoader from 'dataloader';
import type { EntityManager } from '@mikro-orm/core';
import { groupedLoader, keyedLoader } from '../platform/loaders.ts';
import { Consent, DeviceAssociation, ProductRegistration, RegisteredDevice, RegisteredUser, RegisteredVehicle } from './entities.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Loads rows by their uuid primary key; a key that is not a uuid (a foreign reference) is simply not found. */
function uuidLoader<T extends object>(em: EntityManager, entity: Parameters<typeof keyedLoader<T, 'id' & keyof T>>[1]) {
  const inner = keyedLoader<T, 'id' & keyof T>(em, entity, 'id' as 'id' & keyof T);
  return new DataLoader<string, T | null>(async (keys) => Promise.all(keys.map((k) => (UUID.test(k) ? inner.load(k) : null))));
}

const oldestFirst = { effectiveFrom: 'asc', createdAt: 'asc' } as const;

export const createLoaders = (em: EntityManager) => ({
  userById: keyedLoader(em, RegisteredUser, 'userId'),
  deviceById: keyedLoader(em, RegisteredDevice, 'deviceId'),
  vehicleById: keyedLoader(em, RegisteredVehicle, 'vehicleId'),
  registrationById: uuidLoader<ProductRegistration>(em, ProductRegistration),
  consentById: uuidLoader<Consent>(em, Consent),
  associationsByDevice: groupedLoader(em, DeviceAssociation, 'deviceId', oldestFirst),
  associationsByUser: groupedLoader(em, DeviceAssociation, 'userId', oldestFirst),
  associationsByVehicle: groupedLoader(em, DeviceAssociation, 'vehicleId', oldestFirst),
  registrationsByUser: groupedLoader(em, ProductRegistration, 'userId', { registeredAt: 'asc' }),
  registrationsByVehicle: groupedLoader(em, ProductRegistration, 'vehicleId', { registeredAt: 'asc' }),
  consentsByUser: groupedLoader(em, Consent, 'userId', { timestamp: 'asc', recordedAt: 'asc' }),
});

export type RegistrationLoaders = ReturnType<typeof createLoaders>;
