import type { EntityManager } from '@mikro-orm/core';
import { recordEvent } from '../../platform/webhooks/outbox.ts';
import { RescueProvider, RescueStatusEvent, type RescueRequest, type RescueStatus } from '../entities.ts';

type Obj = Record<string, unknown>;

const restStatus = (status: string) => (status === 'EN_ROUTE' ? 'EN-ROUTE' : status);
/** The listed fields of a stored JSON object, null where absent (as GraphQL selects them). */
const fields = (value: Obj | null | undefined, names: string) =>
  (value == null ? null : Object.fromEntries(names.split(' ').map((n) => [n, value[n] ?? null])));
const LOCATION = 'latitude longitude address1 city state zip landmark towLocationId';
const COST = 'service towMiles coveredMiles billableMiles serviceFee mileageFee partsFee totalCost coveredAmount customerPays covered currency';

/** A rescue right after a change: the new values that are not on the (stale) entity yet. */
export interface RescueChange {
  rescue: RescueRequest;
  status: RescueStatus;
  previousStatus: RescueStatus;
  etaAt: Date | null;
  position: { latitude: number; longitude: number };
  at: Date;
  cancelReason?: string | null;
}

/** The rescue as GET /services/roadside/v1/rescue/reqId/{reqId} returns its `serviceRequest`, plus `previousStatus`. */
async function restRescue(tx: EntityManager, change: RescueChange): Promise<Obj> {
  const { rescue: r } = change;
  const done = change.status === 'COMPLETED' || change.status === 'CANCELLED';
  const provider = await tx.findOne(RescueProvider, { providerId: r.providerId });
  const history = await tx.find(RescueStatusEvent, { reqId: r.reqId }, { orderBy: { at: 'asc', id: 'asc' } });
  const customer = fields(r.customer, 'firstName lastName phone') as Obj;
  return {
    requestId: r.reqId, sessionId: r.sessionId, status: restStatus(change.status), previousStatus: restStatus(change.previousStatus),
    serviceType: r.service.toLowerCase(),
    consumer: { ...customer, name: [customer.firstName, customer.lastName].filter(Boolean).join(' ') || null },
    vehicle: fields(r.vehicle, 'make model year color vin'), cost: { ...fields(r.cost, COST), payPerUse: r.payPerUse }, payPerUse: r.payPerUse,
    requestCreationTime: r.createdAt.toISOString(),
    eta: done || !change.etaAt ? null : Math.max(0, Math.ceil((change.etaAt.getTime() - change.at.getTime()) / 60000)),
    etaTime: done || !change.etaAt ? null : change.etaAt.toISOString(),
    disablementAddress: fields(r.disablement, LOCATION), destinationAddress: fields(r.destination, LOCATION),
    details: fields(r.details, 'spareAvailable fuelType keysLocation batteryService comments'),
    provider: provider && {
      providerId: provider.providerId, name: provider.name, phone: provider.phone, metro: provider.metro, state: provider.state,
      position: { latitude: provider.latitude, longitude: provider.longitude }, coverageMiles: provider.coverageMiles, services: provider.services,
      opensAt: provider.opensAt, closesAt: provider.closesAt, timeZone: provider.timeZone,
    },
    driver: { name: r.driverName, position: change.position },
    cancelReason: change.cancelReason ?? r.cancelReason ?? null,
    statusHistory: history.map((e) => ({
      status: restStatus(e.status), at: e.at.toISOString(),
      position: e.latitude == null || e.longitude == null ? null : { latitude: e.latitude, longitude: e.longitude }, etaMinutes: e.etaMinutes, note: e.note,
    })),
    updatedTime: change.at.toISOString(),
  };
}

/**
 * Records rescue.status_changed (and rescue.cancelled for a cancellation), or rescue.updated for a
 * provider's report of position or ETA that keeps the status, in the roadside outbox, on `tx`, the
 * transaction that makes the change (after its status event was created).
 */
export async function recordRescueEvents(tx: EntityManager, change: RescueChange) {
  const resource = await restRescue(tx, change);
  const event = { resourceKey: `rescue:${change.rescue.reqId}`, resourcePath: `/services/roadside/v1/rescue/reqId/${change.rescue.reqId}`, resource };
  recordEvent(tx, { type: change.status === change.previousStatus ? 'rescue.updated' : 'rescue.status_changed', ...event });
  if (change.status === 'CANCELLED') recordEvent(tx, { type: 'rescue.cancelled', ...event });
}
