import type { EntityManager } from '@mikro-orm/core';
import type { Plain } from '../../platform/db/rows.ts';
import { rowsByKeys } from '../../platform/loaders.ts';
import { recordEvent } from '../../platform/webhooks/outbox.ts';
import {
  RESCUE_SERVICES, RescueProvider, RescueStatusEvent, type RescueRequest, type RescueStatus,
} from '../entities.ts';
import { HISTORY_ORDER } from '../loaders.ts';
import { restRescue } from '../representation.ts';
import type {
  RestCostFragment, RestLocationFragment, RestProviderFragment, RestRescueFragment,
} from '../rest.generated.ts';
import { BATTERY_SERVICES, FUEL_TYPES, KEYS_LOCATIONS } from '../rules.ts';

const RESCUE_PATH = '/services/roadside/v1/rescue/reqId';

/** A rescue right after a change: the new values that are not on the row read before it yet. */
export interface RescueChange {
  rescue: Plain<RescueRequest>;
  status: RescueStatus;
  previousStatus: RescueStatus;
  etaAt: Date | null;
  position: { latitude: number; longitude: number };
  at: Date;
  cancelReason?: string | null;
}

// A stored JSON field read as GraphQL serializes it: an absent one is null.
const text = (value: unknown) => (value == null ? null : String(value));
const number = (value: unknown) => (value == null ? null : Number(value));
const flag = (value: unknown) => (value == null ? null : Boolean(value));
/** A stored enum value; any other is a bug, refused as GraphQL would refuse it. */
function choice<T extends string>(values: readonly T[], value: unknown): T {
  const known = values.find((v) => v === value);
  if (known === undefined) throw new Error(`Unexpected stored value ${String(value)}, not one of ${values.join(', ')}`);
  return known;
}
const optionalChoice = <T extends string>(values: readonly T[], value: unknown) =>
  (value == null ? null : choice(values, value));

type Stored = Record<string, unknown>;

const location = (l: Stored): RestLocationFragment => ({
  latitude: Number(l.latitude), longitude: Number(l.longitude), address1: text(l.address1), city: text(l.city),
  state: text(l.state), zip: text(l.zip), landmark: text(l.landmark), towLocationId: text(l.towLocationId),
});

/** The price stored at booking, with the rescue's payPerUse (as the RescueRequest.cost resolver adds it). */
const cost = (c: Stored, payPerUse: boolean): RestCostFragment => ({
  service: choice(RESCUE_SERVICES, c.service), towMiles: Number(c.towMiles), coveredMiles: Number(c.coveredMiles),
  billableMiles: Number(c.billableMiles), serviceFee: Number(c.serviceFee), mileageFee: Number(c.mileageFee),
  partsFee: Number(c.partsFee), totalCost: Number(c.totalCost), coveredAmount: Number(c.coveredAmount),
  customerPays: Number(c.customerPays), covered: Boolean(c.covered), currency: String(c.currency), payPerUse,
});

const provider = (p: Plain<RescueProvider>): RestProviderFragment => ({
  providerId: p.providerId, name: p.name, phone: p.phone, metro: p.metro, state: p.state,
  position: { latitude: p.latitude, longitude: p.longitude }, coverageMiles: p.coverageMiles,
  services: p.services.map((s) => choice(RESCUE_SERVICES, s)), opensAt: p.opensAt ?? null, closesAt: p.closesAt ?? null,
  timeZone: p.timeZone,
});

/**
 * The rescue's status history, oldest first, as plain rows (db/rows.ts), the change's own event
 * included (flushed first): every change reads the whole history, and a long rescue's (a position
 * report every minute) read as entities cost most of the change.
 */
async function statusHistory(tx: EntityManager, reqId: string) {
  await tx.flush();
  return rowsByKeys(tx, RescueStatusEvent, 'reqId', [reqId], HISTORY_ORDER);
}

/**
 * The rescue right after `change` as the REST rows read it from GraphQL (the RestRescue fragment),
 * from the stored entity, its provider and its status history.
 */
async function rescueAfter(tx: EntityManager, change: RescueChange): Promise<RestRescueFragment> {
  const { rescue: r, etaAt } = change;
  const done = change.status === 'COMPLETED' || change.status === 'CANCELLED';
  const [assigned] = await rowsByKeys(tx, RescueProvider, 'providerId', [r.providerId]);
  const history = await statusHistory(tx, r.reqId);
  const { customer: c, vehicle: v, details: d } = r;
  return {
    reqId: r.reqId, sessionId: r.sessionId, service: r.service, status: change.status, payPerUse: r.payPerUse,
    customer: { firstName: text(c.firstName), lastName: text(c.lastName), phone: text(c.phone) },
    vehicle: { make: text(v.make), model: text(v.model), year: number(v.year), color: text(v.color), vin: text(v.vin) },
    disablement: location(r.disablement), destination: r.destination == null ? null : location(r.destination),
    details: {
      spareAvailable: flag(d.spareAvailable), fuelType: optionalChoice(FUEL_TYPES, d.fuelType),
      keysLocation: optionalChoice(KEYS_LOCATIONS, d.keysLocation),
      batteryService: optionalChoice(BATTERY_SERVICES, d.batteryService), comments: text(d.comments),
    },
    cost: cost(r.cost, r.payPerUse), provider: assigned ? provider(assigned) : null,
    driverName: r.driverName, providerPosition: change.position,
    etaMinutes: done || !etaAt ? null : Math.max(0, Math.ceil((etaAt.getTime() - change.at.getTime()) / 60000)),
    etaAt: done || !etaAt ? null : etaAt.toISOString(),
    cancelReason: change.cancelReason ?? r.cancelReason ?? null,
    statusHistory: history.map((e) => ({
      status: e.status, at: e.at.toISOString(),
      position: e.latitude == null || e.longitude == null ? null : { latitude: e.latitude, longitude: e.longitude },
      etaMinutes: e.etaMinutes ?? null, note: e.note ?? null,
    })),
    createdAt: r.createdAt.toISOString(), updatedAt: change.at.toISOString(),
  };
}

/**
 * Records rescue.status_changed (and rescue.cancelled for a cancellation), or rescue.updated for a
 * provider's report of position or ETA that keeps the status, in the roadside outbox, on `tx`, the
 * transaction that makes the change (after its status event was created). The payload is the rescue's
 * `serviceRequest` as GET /services/roadside/v1/rescue/reqId/{reqId} answers it, plus `previousStatus`.
 */
export async function recordRescueEvents(tx: EntityManager, change: RescueChange) {
  const resource = restRescue(await rescueAfter(tx, change), change.previousStatus);
  const { reqId } = change.rescue;
  const event = { resourceKey: `rescue:${reqId}`, resourcePath: `${RESCUE_PATH}/${reqId}`, resource };
  const type = change.status === change.previousStatus ? 'rescue.updated' : 'rescue.status_changed';
  recordEvent(tx, { type, ...event });
  if (change.status === 'CANCELLED') recordEvent(tx, { type: 'rescue.cancelled', ...event });
}
