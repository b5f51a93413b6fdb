import { distance, point } from '@turf/turf';
import { STATE_CODE_PATTERN } from '../rules.ts';
import { badInput } from '../../platform/errors.ts';
import { ZIP_PATTERN } from '../../platform/scalars.ts';

export interface LatLon { latitude: number; longitude: number }

export interface LocationInput extends LatLon {
  address1?: string | null;
  city?: string | null;
  state?: string | null;
  zip?: string | null;
  landmark?: string | null;
}

/** Great-circle distance in miles (turf's haversine). */
export const milesBetween = (a: LatLon, b: LatLon) =>
  distance(point([a.longitude, a.latitude]), point([b.longitude, b.latitude]), { units: 'miles' });

/**
 * The speed model (documented in docs/roadside.md):
 * - road distance = great-circle distance x ROAD_CIRCUITY (streets are not straight lines);
 * - the first CITY_MILES road miles at CITY_MPH, the rest at HIGHWAY_MPH;
 * - a freshly dispatched provider needs DISPATCH_LEAD_MINUTES to accept and get on the road.
 */
export const SPEED_MODEL = {
  ROAD_CIRCUITY: 1.3,
  CITY_MILES: 10,
  CITY_MPH: 25,
  HIGHWAY_MPH: 45,
  DISPATCH_LEAD_MINUTES: 15,
} as const;

export const roadMiles = (a: LatLon, b: LatLon) => milesBetween(a, b) * SPEED_MODEL.ROAD_CIRCUITY;

/** Driving minutes for a great-circle distance, by the speed model (no lead time). */
export function drivingMinutes(greatCircleMiles: number): number {
  const road = greatCircleMiles * SPEED_MODEL.ROAD_CIRCUITY;
  const city = Math.min(road, SPEED_MODEL.CITY_MILES);
  const highway = Math.max(0, road - SPEED_MODEL.CITY_MILES);
  return (city / SPEED_MODEL.CITY_MPH + highway / SPEED_MODEL.HIGHWAY_MPH) * 60;
}

/** Whole minutes until a newly dispatched provider arrives. */
export const dispatchEtaMinutes = (greatCircleMiles: number) =>
  Math.ceil(SPEED_MODEL.DISPATCH_LEAD_MINUTES + drivingMinutes(greatCircleMiles));

/** Validates a point (finite, in range); `field` names it in errors. */
export function checkPoint(value: LatLon | null | undefined, field: string): LatLon {
  if (!value) throw badInput(`${field} is required`, field);
  const { latitude, longitude } = value;
  if (typeof latitude !== 'number' || !Number.isFinite(latitude) || latitude < -90 || latitude > 90) {
    throw badInput(`${field}.latitude must be a number between -90 and 90`, `${field}.latitude`);
  }
  if (typeof longitude !== 'number' || !Number.isFinite(longitude) || longitude < -180 || longitude > 180) {
    throw badInput(`${field}.longitude must be a number between -180 and 180`, `${field}.longitude`);
  }
  return { latitude, longitude };
}

/** A validated location as stored on a rescue. */
export function storedLocation(value: LocationInput | null | undefined, field: string): Record<string, string | number | null> {
  const pt = checkPoint(value, field);
  const v = value as LocationInput;
  const text = (name: keyof LocationInput, max: number) => {
    const s = v[name];
    if (s == null) return null;
    if (typeof s !== 'string' || s.length > max) throw badInput(`${field}.${name} must be a string of at most ${max} characters`, `${field}.${name}`);
    return s;
  };
  const state = text('state', 2);
  if (state != null && !STATE_CODE_PATTERN.test(state)) throw badInput(`${field}.state must be a two-letter state code`, `${field}.state`);
  const zip = text('zip', 10);
  if (zip != null && !ZIP_PATTERN.test(zip)) throw badInput(`${field}.zip must be ##### or #####-####`, `${field}.zip`);
  return {
    ...pt, address1: text('address1', 255), city: text('city', 128), state: state?.toUpperCase() ?? null, zip, landmark: text('landmark', 255),
  };
}

export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
