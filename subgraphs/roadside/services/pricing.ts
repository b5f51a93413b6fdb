import type { RescueService } from '../entities.ts';
import { round } from './geo.ts';

/**
 * The price list (USD), documented in docs/roadside.md. A covered rescue (member with a claim left)
 * pays nothing for the service fee and the covered tow miles; pay-per-use pays everything.
 */
export const PRICE_LIST = {
  serviceFee: { TIRE: 75, LOCKOUT: 65, GAS: 60, TOW: 95, BATTERY: 70 } satisfies Record<RescueService, number>,
  /** Fuel delivered on a gas call, per gallon, on top of the service fee (paid unless covered). */
  fuelPerGallon: 5,
  /** A battery replacement adds the battery itself, never covered. */
  batteryReplacement: 160,
  /** Every road mile towed beyond the covered miles. */
  towPerMile: 4.5,
  currency: 'USD',
} as const;

export interface QuoteInput {
  service: RescueService;
  /** Road miles from disablement to destination (tow only). */
  towMiles: number;
  /** Tow miles the member's plan covers (0 for pay-per-use). */
  coveredMiles: number;
  covered: boolean;
  fuelGallons: number;
  batteryReplace: boolean;
}

export interface Quote {
  service: RescueService;
  towMiles: number;
  coveredMiles: number;
  billableMiles: number;
  serviceFee: number;
  mileageFee: number;
  partsFee: number;
  totalCost: number;
  coveredAmount: number;
  customerPays: number;
  covered: boolean;
  currency: string;
}

export function priceRescue(q: QuoteInput): Quote {
  const serviceFee = PRICE_LIST.serviceFee[q.service];
  const towMiles = q.service === 'TOW' ? round(q.towMiles, 1) : 0;
  const coveredMiles = q.service === 'TOW' && q.covered ? Math.min(towMiles, q.coveredMiles) : 0;
  const billableMiles = round(Math.max(0, towMiles - coveredMiles), 1);
  const allMilesFee = round(towMiles * PRICE_LIST.towPerMile);
  const mileageFee = round(billableMiles * PRICE_LIST.towPerMile);
  const fuelFee = q.service === 'GAS' ? q.fuelGallons * PRICE_LIST.fuelPerGallon : 0;
  const partsFee = q.service === 'BATTERY' && q.batteryReplace ? PRICE_LIST.batteryReplacement : 0;
  const totalCost = round(serviceFee + allMilesFee + fuelFee + partsFee);
  const coveredAmount = q.covered ? round(serviceFee + (allMilesFee - mileageFee) + fuelFee) : 0;
  return {
    service: q.service, towMiles, coveredMiles: round(coveredMiles, 1), billableMiles, serviceFee,
    mileageFee: allMilesFee, partsFee: round(partsFee + fuelFee), totalCost, coveredAmount,
    customerPays: round(totalCost - coveredAmount), covered: q.covered, currency: PRICE_LIST.currency,
  };
}
