import type { EntityManager } from '@mikro-orm/core';
import { RESCUE_SERVICES, RescueMember, RescuePlan, RescueRequest, type RescueService, type RescueSession } from '../entities.ts';
import { BENEFIT_TYPE } from './members.ts';

export interface ServiceBenefit {
  service: RescueService;
  type: string;
  claimCount: number;
  maxClaimCount: number;
  fuelQty: number | null;
  fuelQtyUnit: string | null;
  towMiles: number | null;
}

export interface Benefits {
  status: 'Active' | 'Inactive';
  maxClaimCount: number;
  usageCount: number;
  towToDealershipRequired: boolean;
  membershipExpDate: string | null;
  policyNumber: string | null;
  memberId: string | null;
  partnerCode: string | null;
  planCode: string | null;
  payPerUse: boolean;
  towMiles: number;
  fuelQty: number;
  fuelQtyUnit: string;
  services: ServiceBenefit[];
}

const today = () => new Date().toISOString().slice(0, 10);

/** Nothing covered: a session without a member, or pay-per-use. */
function noBenefits(session: RescueSession): Benefits {
  return {
    status: 'Inactive', maxClaimCount: 0, usageCount: 0, towToDealershipRequired: false, membershipExpDate: null, policyNumber: null,
    memberId: null, partnerCode: null, planCode: null, payPerUse: session.payPerUse, towMiles: 0, fuelQty: 0, fuelQtyUnit: 'gallons',
    services: RESCUE_SERVICES.map((service) => ({ service, type: BENEFIT_TYPE[service], claimCount: 0, maxClaimCount: 0, fuelQty: null, fuelQtyUnit: null, towMiles: null })),
  };
}

/**
 * A member's benefits: the plan named by the member's productType, with the member's own
 * numberOfEvents / milesPerTow overriding the plan's totals, and usage counted from the member's
 * rescues that hold a claim (a dispatch takes one, a cancel gives it back).
 */
export class BenefitService {
  private readonly em: EntityManager;
  constructor(em: EntityManager) { this.em = em; }

  async forSession(session: RescueSession): Promise<Benefits> {
    if (!session.memberRef) return noBenefits(session);
    const member = await this.em.findOne(RescueMember, { id: session.memberRef });
    if (!member) return noBenefits(session);
    return this.forMember(member, session.payPerUse);
  }

  async forMember(member: RescueMember, payPerUse = false): Promise<Benefits> {
    const plan = await this.em.findOne(RescuePlan, { planCode: member.productType });
    if (!plan) throw new Error(`plan ${member.productType} is missing from the reference data`);
    const used = await this.em.find(RescueRequest, { memberRef: member.id, claimConsumed: true }, { fields: ['service'] });
    const byService = new Map<RescueService, number>();
    for (const r of used) byService.set(r.service, (byService.get(r.service) ?? 0) + 1);
    const maxClaimCount = member.numberOfEvents ?? plan.maxClaimCount;
    const towMiles = member.milesPerTow ?? plan.towMiles;
    const active = member.effectiveEndDate == null || member.effectiveEndDate >= today();
    return {
      status: active ? 'Active' : 'Inactive', maxClaimCount, usageCount: used.length, towToDealershipRequired: plan.towToDealershipRequired,
      membershipExpDate: member.effectiveEndDate ?? null, policyNumber: member.memberId, memberId: member.memberId, partnerCode: member.partnerCode,
      planCode: plan.planCode, payPerUse, towMiles, fuelQty: plan.fuelQty, fuelQtyUnit: plan.fuelQtyUnit,
      services: RESCUE_SERVICES.map((service) => ({
        service, type: BENEFIT_TYPE[service], claimCount: byService.get(service) ?? 0,
        maxClaimCount: Math.min(plan.serviceMaxClaims[BENEFIT_TYPE[service]] ?? 0, maxClaimCount),
        fuelQty: service === 'GAS' ? plan.fuelQty : null, fuelQtyUnit: service === 'GAS' ? plan.fuelQtyUnit : null,
        towMiles: service === 'TOW' ? towMiles : null,
      })),
    };
  }
}

/** Whether a new rescue of `service` is covered: an active membership with a claim left overall and for the service. */
export function claimAvailable(b: Benefits, service: RescueService): boolean {
  if (b.payPerUse || b.status !== 'Active') return false;
  const s = b.services.find((x) => x.service === service);
  return b.usageCount < b.maxClaimCount && !!s && s.claimCount < s.maxClaimCount;
}
