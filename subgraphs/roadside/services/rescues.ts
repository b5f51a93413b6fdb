import { LockMode, type EntityManager } from '@mikro-orm/core';
import { AppError, badInput, conflict, isConstraintConflict, notFound } from '../../platform/errors.ts';
import {
  RescueAsset, RescueFeedback, RescueMember, RescueRequest, RescueStatusEvent, TowLocation, VehicleModel,
  type RescueService, type RescueSession, type RescueStatus,
} from '../entities.ts';
import { BenefitService, claimAvailable, type Benefits } from './benefits.ts';
import { checkPoint, drivingMinutes, milesBetween, roadMiles, round, storedLocation, type LatLon, type LocationInput } from './geo.ts';
import { priceRescue, type Quote } from './pricing.ts';
import { ReferenceService } from './reference.ts';
import { SessionService } from './sessions.ts';
import { recordRescueEvents } from './events.ts';
import type { Plain } from '../../platform/db/rows.ts';
import { inSandbox } from '../../platform/db/tenant.ts';
import { rowsByKeys } from '../../platform/loaders.ts';
import { BATTERY_SERVICES, FUEL_TYPES, KEYS_LOCATIONS } from '../rules.ts';

/** The forward path of a rescue; CANCELLED is reached only through cancel. */
export const LIFECYCLE: readonly RescueStatus[] = ['BOOKED', 'EN_ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED'];
/** Statuses in which a repeated update only moves the provider and its ETA. */
const MOVING: readonly RescueStatus[] = ['EN_ROUTE', 'APPROACHING'];
/** Cancel is refused from APPROACHING on, and while the provider is this close. */
export const CANCEL_MIN_ETA_MINUTES = 15;
const MAX_TOW_MILES = 250;

export interface DispatchInput {
  sessionId: string;
  disablementLocation: LocationInput;
  destination?: LocationInput | null;
  towLocationId?: string | null;
  vehicle?: { make?: string | null; model?: string | null; year?: number | null; color?: string | null; vin?: string | null } | null;
  customer?: { firstName?: string | null; lastName?: string | null; phone?: string | null } | null;
  spareAvailable?: boolean | null;
  fuelType?: string | null;
  keysLocation?: string | null;
  batteryService?: string | null;
  comments?: string | null;
}

export interface QuoteRequest {
  sessionId: string;
  service?: RescueService | null;
  disablementLocation: LatLon;
  destination?: LatLon | null;
  towLocationId?: string | null;
  batteryService?: string | null;
}

export interface StatusUpdateInput {
  reqId: string;
  sessionId?: string | null;
  status: RescueStatus;
  latitude?: number | null;
  longitude?: number | null;
  updatedETA?: number | null;
  note?: string | null;
}

/** The transition from `from` to `to` is legal (a repeat of EN_ROUTE/APPROACHING is a position update). */
export function isLegalTransition(from: RescueStatus, to: RescueStatus): boolean {
  if (to === 'CANCELLED') return from === 'BOOKED' || from === 'EN_ROUTE';
  if (from === to) return MOVING.includes(from);
  const i = LIFECYCLE.indexOf(from);
  return i >= 0 && LIFECYCLE[i + 1] === to;
}

const minutesUntil = (at: Date, now = new Date()) => Math.max(0, Math.ceil((at.getTime() - now.getTime()) / 60000));

function requireChoice<T extends string>(value: string | null | undefined, choices: readonly T[], field: string, why: string): T {
  if (value == null) throw badInput(`${field} is required: ${why}`, field);
  const v = value.trim().toUpperCase().replaceAll(/[\s-]/g, '_');
  if (!(choices as readonly string[]).includes(v)) throw badInput(`${field} must be one of ${choices.join(', ')}`, field);
  return v as T;
}

const checkedReqId = (reqId: string) => {
  if (typeof reqId !== 'string' || !reqId.trim()) throw badInput('reqId is required', 'reqId');
  return reqId;
};

/** The rescue read, when there is one and a sessionId given is its own. */
function owned<T extends { sessionId: string }>(rescue: T | null, reqId: string, sessionId: string | null | undefined): T {
  if (!rescue || (sessionId != null && sessionId !== rescue.sessionId)) throw notFound('Rescue request', reqId);
  return rescue;
}

export class RescueRequestService {
  private readonly em: EntityManager;
  constructor(em: EntityManager) { this.em = em; }

  private sessions() { return new SessionService(this.em); }
  private reference() { return new ReferenceService(this.em); }

  /** A rescue of the caller's organisation; a sessionId, when given, must be the rescue's. */
  async get(reqId: string, sessionId?: string | null): Promise<RescueRequest> {
    return owned(await this.em.findOne(RescueRequest, { reqId: checkedReqId(reqId) }), reqId, sessionId);
  }

  /** get's read-only twin for a change, which reads the rescue and updates it with a statement: a plain row (db/rows.ts). */
  private async row(reqId: string, sessionId?: string | null): Promise<Plain<RescueRequest>> {
    const [rescue] = await rowsByKeys(this.em, RescueRequest, 'reqId', [checkedReqId(reqId)]);
    return owned(rescue ?? null, reqId, sessionId);
  }

  /** Destination of a tow: a tow-to location id, or coordinates. */
  private async destination(input: { destination?: LocationInput | null; towLocationId?: string | null }) {
    if (input.towLocationId != null) {
      const loc = await this.reference().towLocation(input.towLocationId);
      return {
        latitude: loc.latitude, longitude: loc.longitude, address1: loc.address1, city: loc.city, state: loc.state, zip: loc.zip,
        landmark: loc.name, towLocationId: loc.locationId,
      };
    }
    if (input.destination == null) return null;
    return { ...storedLocation(input.destination, 'destination'), towLocationId: null };
  }

  private async benefitsFor(session: RescueSession): Promise<Benefits> {
    return new BenefitService(this.em).forSession(session);
  }

  /** Prices a rescue for the session's member without booking it. */
  async quote(input: QuoteRequest): Promise<Quote & { payPerUse: boolean }> {
    const session = await this.sessions().get(input.sessionId);
    const service = input.service ?? 'TOW';
    const from = checkPoint(input.disablementLocation, 'disablementLocation');
    const dest = await this.destination({ destination: input.destination as LocationInput | null, towLocationId: input.towLocationId });
    if (service === 'TOW' && !dest) throw badInput('a tow needs a destination or a towLocationId', 'destination');
    const miles = dest ? roadMiles(from, dest as LatLon) : 0;
    if (service === 'TOW' && miles > MAX_TOW_MILES) throw badInput(`a tow may be at most ${MAX_TOW_MILES} road miles`, 'destination');
    const benefits = await this.benefitsFor(session);
    const covered = claimAvailable(benefits, service);
    const batteryReplace = service === 'BATTERY' && input.batteryService != null
      && requireChoice(input.batteryService, BATTERY_SERVICES, 'batteryService', 'jump or replace') === 'REPLACE';
    return {
      ...priceRescue({ service, towMiles: miles, coveredMiles: benefits.towMiles, covered, fuelGallons: benefits.fuelQty || 2, batteryReplace }),
      payPerUse: session.payPerUse,
    };
  }

  /** Service-specific inputs, validated. */
  private details(service: RescueService, input: DispatchInput): Record<string, string | boolean | null> {
    const comments = input.comments ?? null;
    if (comments != null && comments.length > 1000) throw badInput('comments must be at most 1000 characters', 'comments');
    switch (service) {
      case 'TIRE':
        if (input.spareAvailable == null) throw badInput('spareAvailable is required for a tire change', 'spareAvailable');
        if (!input.spareAvailable) throw badInput('a tire change needs a usable spare on board; book a tow instead', 'spareAvailable');
        return { spareAvailable: true, comments };
      case 'GAS':
        return { fuelType: requireChoice(input.fuelType, FUEL_TYPES, 'fuelType', 'which fuel to deliver'), comments };
      case 'LOCKOUT':
        return { keysLocation: requireChoice(input.keysLocation, KEYS_LOCATIONS, 'keysLocation', 'where the keys are'), comments };
      case 'BATTERY':
        return { batteryService: requireChoice(input.batteryService, BATTERY_SERVICES, 'batteryService', 'jump or replace'), comments };
      case 'TOW':
        return { comments };
    }
  }

  private async vehicle(input: DispatchInput['vehicle'], member: RescueMember | null, session: RescueSession) {
    const v = input ?? {};
    const sessionVin = session.benefits.find((b) => b.key.toLowerCase() === 'vin')?.value?.toUpperCase();
    let asset: RescueAsset | null = null;
    if (member) {
      const assets = await this.em.find(RescueAsset, { partnerCode: member.partnerCode, memberId: member.memberId }, { orderBy: { createdAt: 'asc' } });
      const vin = v.vin?.toUpperCase() ?? sessionVin;
      asset = assets.find((a) => vin && a.vin === vin) ?? assets[0] ?? null;
    }
    const make = v.make ?? asset?.make ?? null;
    let canonicalMake = make;
    if (make != null) {
      const known = await this.em.findOne(VehicleModel, { makeKey: make.trim().toLowerCase() });
      if (!known) throw badInput(`unknown vehicle make '${make}' (see GET /vehicle/makes)`, 'vehicle.make');
      canonicalMake = known.make;
    }
    const year = v.year ?? asset?.year ?? null;
    const maxYear = new Date().getUTCFullYear() + 1;
    if (year != null && (!Number.isInteger(year) || year < 1900 || year > maxYear)) throw badInput(`vehicle.year must be from 1900 to ${maxYear}`, 'vehicle.year');
    const vin = v.vin ?? asset?.vin ?? sessionVin ?? null;
    if (vin != null && !/^[A-Za-z0-9]{17}$/.test(vin)) throw badInput('vehicle.vin must be 17 letters or digits', 'vehicle.vin');
    for (const f of ['model', 'color'] as const) {
      if (v[f] != null && (typeof v[f] !== 'string' || v[f].length > 64)) throw badInput(`vehicle.${f} must be at most 64 characters`, `vehicle.${f}`);
    }
    return { make: canonicalMake, model: v.model ?? asset?.model ?? null, year, color: v.color ?? null, vin: vin?.toUpperCase() ?? null };
  }

  /**
   * Books and dispatches a rescue: validates the service's inputs, takes a claim when the member
   * has one left (under a lock on the member, so concurrent dispatches cannot overspend), prices
   * it, and assigns the nearest open provider offering the service whose coverage includes the spot.
   */
  async dispatch(service: RescueService, input: DispatchInput): Promise<RescueRequest> {
    const session = await this.sessions().get(input.sessionId);
    const disablement = storedLocation(input.disablementLocation, 'disablementLocation');
    const details = this.details(service, input);
    const dest = service === 'TOW' ? await this.destination(input) : null;
    if (service === 'TOW' && !dest) throw badInput('a tow needs a destination or a towLocationId', 'destination');
    const towMiles = dest ? roadMiles(disablement as unknown as LatLon, dest as LatLon) : 0;
    if (towMiles > MAX_TOW_MILES) throw badInput(`a tow may be at most ${MAX_TOW_MILES} road miles`, 'destination');
    const customerIn = input.customer ?? {};
    for (const f of ['firstName', 'lastName', 'phone'] as const) {
      if (customerIn[f] != null && (typeof customerIn[f] !== 'string' || customerIn[f].length > 128)) throw badInput(`customer.${f} must be at most 128 characters`, `customer.${f}`);
    }
    if (!session.memberRef && !session.payPerUse) {
      throw badInput('the session names no provisioned member; start a pay-per-use session (otherInfo ppuflag=Y) or send member benefits', 'sessionId');
    }
    const candidates = (await this.reference().providersCovering(disablement as unknown as LatLon, service)).filter((c) => c.openNow);
    const chosen = candidates[0];
    if (!chosen) throw conflict(`No provider offering ${service.toLowerCase()} is available at this location now`, { field: 'disablementLocation' });

    const reqId = crypto.randomUUID();
    const now = new Date();
    const rescue = await this.em.transactional(async (tx) => {
      const member = session.memberRef
        ? await tx.findOne(RescueMember, { id: session.memberRef }, { lockMode: LockMode.PESSIMISTIC_WRITE })
        : null;
      const benefits = member ? await new BenefitService(tx).forMember(member, session.payPerUse) : null;
      const covered = !!benefits && claimAvailable(benefits, service);
      if (member && !covered && !session.payPerUse) {
        const why = benefits?.status !== 'Active' ? 'the membership is not active' : `no ${service.toLowerCase()} claims are left`;
        throw new AppError('CONFLICT', `${why}; start a pay-per-use session (otherInfo ppuflag=Y)`, { field: 'sessionId' });
      }
      if (service === 'TOW' && covered && benefits?.towToDealershipRequired) await this.requireDealer(tx, dest?.towLocationId ?? null);
      const cost = priceRescue({
        service, towMiles, coveredMiles: benefits?.towMiles ?? 0, covered, fuelGallons: benefits?.fuelQty || 2,
        batteryReplace: details.batteryService === 'REPLACE',
      });
      const vehicle = await new RescueRequestService(tx).vehicle(input.vehicle, member, session);
      const drivers = chosen.provider.drivers.length ? chosen.provider.drivers : ['On-duty driver'];
      const row = tx.create(RescueRequest, {
        reqId, sessionId: session.sessionId, memberRef: member?.id ?? null, service, status: 'BOOKED', payPerUse: !covered,
        claimConsumed: covered,
        customer: {
          firstName: customerIn.firstName ?? member?.firstName ?? null, lastName: customerIn.lastName ?? member?.lastName ?? null,
          phone: customerIn.phone ?? member?.phone ?? null,
        },
        vehicle, disablement, destination: dest, details, cost: { ...cost },
        providerId: chosen.provider.providerId, driverName: drivers[reqId.charCodeAt(0) % drivers.length],
        providerLatitude: chosen.provider.latitude, providerLongitude: chosen.provider.longitude,
        etaAt: new Date(now.getTime() + chosen.etaMinutes * 60000), cancelReason: null, sandbox: inSandbox(tx),
      } as never);
      tx.create(RescueStatusEvent, {
        reqId, status: 'BOOKED', latitude: chosen.provider.latitude, longitude: chosen.provider.longitude,
        etaMinutes: chosen.etaMinutes, note: `dispatched ${chosen.provider.providerId}`, at: now,
      } as never);
      return row;
    });
    return rescue;
  }

  /** A plan that tows to dealers only covers a tow whose destination is a DEALER tow-to location. */
  private async requireDealer(em: EntityManager, towLocationId: string | null) {
    const location = towLocationId ? await em.findOne(TowLocation, { locationId: towLocationId }) : null;
    if (location?.type !== 'DEALER') {
      throw badInput("the member's plan covers tows to a dealer only: choose a DEALER towLocationId (POST /rescue/tow/locations with type DEALER)", 'towLocationId');
    }
  }

  /** Moves a rescue along its lifecycle (or updates position/ETA while moving); illegal moves are CONFLICT. */
  async updateStatus(input: StatusUpdateInput): Promise<Plain<RescueRequest>> {
    const rescue = await this.row(input.reqId, input.sessionId);
    const to = input.status;
    if (to === 'CANCELLED') throw badInput('cancel a rescue with cancelRescue (POST /rescue/reqId/{reqId}/cancel)', 'status');
    const hasLat = input.latitude != null;
    if (hasLat !== (input.longitude != null)) throw badInput('latitude and longitude go together', hasLat ? 'longitude' : 'latitude');
    const position = hasLat ? checkPoint({ latitude: input.latitude as number, longitude: input.longitude as number }, 'position') : null;
    if (input.updatedETA != null && (!Number.isInteger(input.updatedETA) || input.updatedETA < 0 || input.updatedETA > 1440)) {
      throw badInput('updatedETA must be whole minutes from 0 to 1440', 'updatedETA');
    }
    if (input.note != null && input.note.length > 500) throw badInput('note must be at most 500 characters', 'note');
    const from = rescue.status;
    if (!isLegalTransition(from, to)) {
      throw conflict(`A rescue cannot go from ${from} to ${to}`, { field: 'status', from, to });
    }
    const now = new Date();
    const spot = { latitude: rescue.disablement.latitude as number, longitude: rescue.disablement.longitude as number };
    let etaMinutes: number;
    if (to === 'ARRIVED_ONSITE' || to === 'COMPLETED') etaMinutes = 0;
    else if (input.updatedETA != null) etaMinutes = input.updatedETA;
    else if (position) etaMinutes = Math.ceil(drivingMinutes(milesBetween(position, spot)));
    else etaMinutes = minutesUntil(rescue.etaAt, now);
    const lat = position?.latitude ?? (to === 'ARRIVED_ONSITE' ? spot.latitude : rescue.providerLatitude);
    const lon = position?.longitude ?? (to === 'ARRIVED_ONSITE' ? spot.longitude : rescue.providerLongitude);
    const etaAt = new Date(now.getTime() + etaMinutes * 60000);
    const changes = { status: to, providerLatitude: lat, providerLongitude: lon, etaAt, updatedAt: now };
    await this.em.transactional(async (tx) => {
      const changed = await tx.nativeUpdate(RescueRequest, { reqId: rescue.reqId, status: from }, changes);
      if (changed !== 1) throw conflict(`The rescue changed status concurrently; it is no longer ${from}`, { field: 'status' });
      tx.create(RescueStatusEvent, { reqId: rescue.reqId, status: to, latitude: lat, longitude: lon, etaMinutes, note: input.note ?? null, at: now } as never);
      await recordRescueEvents(tx, {
        rescue, status: to, previousStatus: from, etaAt, position: { latitude: lat, longitude: lon }, at: now,
      });
    });
    // Not read again: the update wrote these columns only, and only while the status was still `from`.
    return { ...rescue, ...changes };
  }

  /** Cancels before APPROACHING while the ETA is over 15 minutes, and gives the claim back. */
  async cancel(reqId: string, sessionId: string | null | undefined, reason?: string | null): Promise<Plain<RescueRequest>> {
    if (reason != null && reason.length > 500) throw badInput('reason must be at most 500 characters', 'reason');
    const rescue = await this.row(reqId, sessionId);
    const from = rescue.status;
    if (!isLegalTransition(from, 'CANCELLED')) throw conflict(`A rescue that is ${from} can no longer be cancelled`, { field: 'status', from, to: 'CANCELLED' });
    const now = new Date();
    const threshold = new Date(now.getTime() + CANCEL_MIN_ETA_MINUTES * 60000);
    if (rescue.etaAt <= threshold) {
      throw conflict(`The provider is ${minutesUntil(rescue.etaAt, now)} minutes away; a rescue can be cancelled only while the ETA is over ${CANCEL_MIN_ETA_MINUTES} minutes`, { field: 'reqId' });
    }
    const changes = { status: 'CANCELLED' as const, claimConsumed: false, cancelReason: reason ?? null, updatedAt: now };
    await this.em.transactional(async (tx) => {
      const changed = await tx.nativeUpdate(RescueRequest, { reqId, status: from, etaAt: { $gt: threshold } }, changes);
      if (changed !== 1) throw conflict('The rescue changed concurrently and can no longer be cancelled', { field: 'reqId' });
      tx.create(RescueStatusEvent, {
        reqId, status: 'CANCELLED', latitude: rescue.providerLatitude, longitude: rescue.providerLongitude, etaMinutes: null, note: reason ?? null, at: now,
      } as never);
      await recordRescueEvents(tx, {
        rescue, status: 'CANCELLED', previousStatus: from, etaAt: null, cancelReason: reason ?? null, at: now,
        position: { latitude: rescue.providerLatitude, longitude: rescue.providerLongitude },
      });
    });
    return { ...rescue, ...changes };
  }

  async eta(reqId: string, sessionId?: string | null) {
    const rescue = await this.get(reqId, sessionId);
    const done = rescue.status === 'COMPLETED' || rescue.status === 'CANCELLED';
    const spot = { latitude: rescue.disablement.latitude as number, longitude: rescue.disablement.longitude as number };
    const position = { latitude: rescue.providerLatitude, longitude: rescue.providerLongitude };
    return {
      rescue, etaMinutes: done ? null : minutesUntil(rescue.etaAt), etaAt: done ? null : rescue.etaAt,
      providerPosition: position, distanceMiles: round(milesBetween(position, spot)),
    };
  }

  /** The assigned provider and the other providers that could serve the rescue, nearest first. */
  async providers(reqId: string, sessionId?: string | null) {
    const rescue = await this.get(reqId, sessionId);
    const spot = { latitude: rescue.disablement.latitude as number, longitude: rescue.disablement.longitude as number };
    const candidates = await this.reference().providersCovering(spot, rescue.service);
    return { rescue, candidates: candidates.map((c) => ({ ...c, assigned: c.provider.providerId === rescue.providerId })) };
  }

  /** One feedback per completed rescue. */
  async feedback(input: { reqId: string; sessionId?: string | null; rating: number; comment?: string | null }): Promise<RescueFeedback> {
    if (!Number.isInteger(input.rating) || input.rating < 1 || input.rating > 5) throw badInput('rating must be a whole number from 1 to 5', 'rating');
    if (input.comment != null && input.comment.length > 2000) throw badInput('comment must be at most 2000 characters', 'comment');
    const rescue = await this.get(input.reqId, input.sessionId);
    if (rescue.status !== 'COMPLETED') throw conflict(`Feedback is taken once a rescue is COMPLETED; this one is ${rescue.status}`, { field: 'reqId' });
    const row = this.em.create(RescueFeedback, { reqId: rescue.reqId, rating: input.rating, comment: input.comment ?? null } as never);
    try {
      await this.em.flush();
    } catch (error) {
      if (isConstraintConflict(error)) throw conflict('This rescue already has feedback', { field: 'reqId' });
      throw error;
    }
    return row;
  }
}

