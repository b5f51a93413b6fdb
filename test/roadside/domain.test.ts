import { describe, expect, it } from 'vitest';
import { RescueProvider, RESCUE_STATUSES } from '../../subgraphs/roadside/entities.ts';
import { dispatchEtaMinutes, drivingMinutes, milesBetween, SPEED_MODEL } from '../../subgraphs/roadside/services/geo.ts';
import { priceRescue } from '../../subgraphs/roadside/services/pricing.ts';
import { isOpen } from '../../subgraphs/roadside/services/reference.ts';
import { isLegalTransition } from '../../subgraphs/roadside/services/rescues.ts';
import { readReferenceData, SAMPLE_DATA_DIR } from '../../subgraphs/roadside/data/load.ts';

describe('speed model', () => {
  it('measures great-circle miles', () => {
    // Chicago Loop to downtown Los Angeles is about 1,745 miles.
    expect(milesBetween({ latitude: 41.8781, longitude: -87.6298 }, { latitude: 34.0522, longitude: -118.2437 })).toBeCloseTo(1745, -1);
  });

  it('drives the first 10 road miles at 25 mph and the rest at 45 mph, after a 15 minute lead', () => {
    expect(drivingMinutes(0)).toBe(0);
    // 5 miles -> 6.5 road miles at 25 mph = 15.6 min.
    expect(drivingMinutes(5)).toBeCloseTo(15.6, 5);
    // 20 miles -> 26 road miles: 10 at 25 mph (24 min) + 16 at 45 mph (21.33 min).
    expect(drivingMinutes(20)).toBeCloseTo(24 + (16 / 45) * 60, 5);
    expect(dispatchEtaMinutes(0)).toBe(SPEED_MODEL.DISPATCH_LEAD_MINUTES);
    expect(dispatchEtaMinutes(5)).toBe(31);
  });
});

describe('pricing', () => {
  it('covers the service fee and the covered tow miles; the customer pays the miles beyond', () => {
    const q = priceRescue({ service: 'TOW', towMiles: 30, coveredMiles: 10, covered: true, fuelGallons: 0, batteryReplace: false });
    expect(q).toMatchObject({ towMiles: 30, coveredMiles: 10, billableMiles: 20, serviceFee: 95, mileageFee: 135, totalCost: 230, coveredAmount: 140, customerPays: 90 });
  });

  it('charges everything when not covered, and never covers a replacement battery', () => {
    expect(priceRescue({ service: 'TOW', towMiles: 30, coveredMiles: 10, covered: false, fuelGallons: 0, batteryReplace: false }).customerPays).toBe(230);
    const battery = priceRescue({ service: 'BATTERY', towMiles: 0, coveredMiles: 10, covered: true, fuelGallons: 0, batteryReplace: true });
    expect(battery).toMatchObject({ totalCost: 230, coveredAmount: 70, customerPays: 160 });
    expect(priceRescue({ service: 'GAS', towMiles: 9, coveredMiles: 0, covered: true, fuelGallons: 3, batteryReplace: false })).toMatchObject({ towMiles: 0, totalCost: 75, customerPays: 0 });
  });
});

describe('lifecycle rules', () => {
  it('allows exactly the forward steps, repeats while moving, and cancel before APPROACHING', () => {
    const legal = RESCUE_STATUSES.flatMap((from) => RESCUE_STATUSES.filter((to) => isLegalTransition(from, to)).map((to) => `${from}->${to}`));
    expect(legal.sort()).toEqual([
      'APPROACHING->APPROACHING', 'APPROACHING->ARRIVED_ONSITE', 'ARRIVED_ONSITE->COMPLETED', 'BOOKED->CANCELLED', 'BOOKED->EN_ROUTE',
      'EN_ROUTE->APPROACHING', 'EN_ROUTE->CANCELLED', 'EN_ROUTE->EN_ROUTE',
    ]);
  });
});

describe('provider hours', () => {
  const provider = (opensAt: string | null, closesAt: string | null) =>
    Object.assign(new RescueProvider(), { active: true, timeZone: 'America/Chicago', opensAt, closesAt });
  it('reads opening hours in the provider time zone, including hours across midnight', () => {
    // 2026-07-01 12:00 UTC is 07:00 in Chicago (CDT).
    const at = new Date('2026-07-01T12:00:00Z');
    expect(isOpen(provider(null, null), at)).toBe(true);
    expect(isOpen(provider('07:00', '19:00'), at)).toBe(true);
    expect(isOpen(provider('07:30', '19:00'), at)).toBe(false);
    expect(isOpen(provider('22:00', '08:00'), at)).toBe(true);
    expect(isOpen(provider('22:00', '06:00'), at)).toBe(false);
  });
});

describe('shipped sample data', () => {
  it('reads, with providers in California and Illinois and a real make list', async () => {
    const data = await readReferenceData(SAMPLE_DATA_DIR);
    expect(new Set(data.providers.providers.map((p) => p.state))).toEqual(new Set(['CA', 'IL']));
    expect(Object.keys(data.vehicles.makes)).toEqual(expect.arrayContaining(['Ford', 'Toyota', 'Honda', 'Chevrolet', 'Tesla']));
    expect(data.plans.plans.map((p) => p.planCode)).toEqual(['BASIC', 'PLUS', 'PREMIER', 'OEM']);
  });
});
