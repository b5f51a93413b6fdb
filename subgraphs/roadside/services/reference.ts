import type { EntityManager } from '@mikro-orm/core';
import { badInput, notFound } from '../../platform/errors.ts';
import { RESCUE_SERVICES, RescueProvider, TOW_LOCATION_TYPES, TowLocation, VehicleModel, type RescueService, type TowLocationType } from '../entities.ts';
import { checkPoint, dispatchEtaMinutes, milesBetween, round, type LatLon } from './geo.ts';

/** Local HH:MM in a time zone. */
function localTime(at: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at);
}

/** Open at `at`: around the clock, or within its local hours (which may span midnight). */
export function isOpen(provider: RescueProvider, at: Date): boolean {
  if (!provider.active) return false;
  if (!provider.opensAt || !provider.closesAt) return true;
  const now = localTime(at, provider.timeZone);
  return provider.opensAt <= provider.closesAt
    ? now >= provider.opensAt && now < provider.closesAt
    : now >= provider.opensAt || now < provider.closesAt;
}

export interface ProviderCandidate {
  provider: RescueProvider;
  distanceMiles: number;
  etaMinutes: number;
  openNow: boolean;
}

export class ReferenceService {
  private readonly em: EntityManager;
  constructor(em: EntityManager) { this.em = em; }

  /** Every make, alphabetical. */
  async makes(): Promise<string[]> {
    const rows = await this.em.find(VehicleModel, {}, { fields: ['makeKey', 'make'], orderBy: { makeKey: 'asc' } });
    return [...new Map(rows.map((r) => [r.makeKey, r.make])).values()];
  }

  /** Models of a make, matched case-insensitively; an unknown make is NOT_FOUND. */
  async models(make: string): Promise<{ make: string; models: string[] }> {
    const key = make.trim().toLowerCase();
    if (!key) throw badInput('make is required', 'make');
    const rows = await this.em.find(VehicleModel, { makeKey: key }, { orderBy: { modelKey: 'asc' } });
    if (!rows.length) throw notFound('Vehicle make', make);
    return { make: rows[0].make, models: rows.map((r) => r.model) };
  }

  /** Providers whose coverage includes `at`, offering `service` when given, nearest first. */
  async providersCovering(at: LatLon, service?: RescueService, now = new Date()): Promise<ProviderCandidate[]> {
    const all = await this.em.find(RescueProvider, { active: true });
    return all
      .filter((p) => !service || p.services.includes(service))
      .map((p) => ({ provider: p, distanceMiles: milesBetween(p, at) }))
      .filter((c) => c.distanceMiles <= c.provider.coverageMiles)
      .map((c) => ({ ...c, distanceMiles: round(c.distanceMiles), etaMinutes: dispatchEtaMinutes(c.distanceMiles), openNow: isOpen(c.provider, now) }))
      .sort((a, b) => a.distanceMiles - b.distanceMiles || a.provider.providerId.localeCompare(b.provider.providerId));
  }

  /** For each service asked (all by default): available now at the point, how many providers, nearest ETA. */
  async availability(point: LatLon, services?: RescueService[] | null, now = new Date()) {
    const at = checkPoint(point, 'location');
    const covering = await this.providersCovering(at, undefined, now);
    const wanted = services?.length ? services : [...RESCUE_SERVICES];
    const result = wanted.map((service) => {
      const open = covering.filter((c) => c.openNow && c.provider.services.includes(service));
      return {
        service, available: open.length > 0, providerCount: open.length,
        nearestProviderMiles: open[0]?.distanceMiles ?? null, etaMinutes: open[0]?.etaMinutes ?? null,
      };
    });
    return { latitude: at.latitude, longitude: at.longitude, available: result.some((r) => r.available), services: result, checkedAt: now };
  }

  /** Tow-to destinations near a point, nearest first. */
  async towLocations(args: { latitude: number; longitude: number; radiusMiles?: number | null; type?: string | null; make?: string | null; limit?: number | null }) {
    const at = checkPoint(args, 'location');
    const radius = args.radiusMiles ?? 25;
    if (!Number.isFinite(radius) || radius <= 0 || radius > 200) throw badInput('radiusMiles must be more than 0 and at most 200', 'radiusMiles');
    const limit = args.limit ?? 10;
    if (!Number.isInteger(limit) || limit < 1 || limit > 50) throw badInput('limit must be an integer from 1 to 50', 'limit');
    let type: TowLocationType | undefined;
    if (args.type != null) {
      const t = String(args.type).trim().toUpperCase().replaceAll(/[\s-]/g, '_');
      if (!(TOW_LOCATION_TYPES as readonly string[]).includes(t)) throw badInput(`type must be one of ${TOW_LOCATION_TYPES.join(', ')}`, 'type');
      type = t as TowLocationType;
    }
    const make = args.make?.trim().toLowerCase();
    const rows = await this.em.find(TowLocation, type ? { type } : {});
    return rows
      .filter((l) => !make || l.type !== 'DEALER' || l.brands.some((b) => b.toLowerCase() === make))
      .map((location) => ({ location, distanceMiles: round(milesBetween(location, at)) }))
      .filter((r) => r.distanceMiles <= radius)
      .sort((a, b) => a.distanceMiles - b.distanceMiles)
      .slice(0, limit);
  }

  async towLocation(locationId: string): Promise<TowLocation> {
    const row = await this.em.findOne(TowLocation, { locationId });
    if (!row) throw notFound('Tow location', locationId);
    return row;
  }
}
