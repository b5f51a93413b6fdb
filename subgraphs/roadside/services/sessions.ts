import type { EntityManager } from '@mikro-orm/core';
import { badInput, notFound } from '../../platform/errors.ts';
import { RescueAsset, RescueMember, RescueSession, type KeyValue } from '../entities.ts';

export interface SessionInput {
  appId: string;
  benefits?: KeyValue[] | null;
  otherInfo?: KeyValue[] | null;
}

const MAX_PAIRS = 25;

function checkPairs(pairs: KeyValue[] | null | undefined, field: string): KeyValue[] {
  if (pairs == null) return [];
  if (!Array.isArray(pairs)) throw badInput(`${field} must be a list of {key, value}`, field);
  if (pairs.length > MAX_PAIRS) throw badInput(`${field} takes at most ${MAX_PAIRS} entries`, field);
  return pairs.map((pair, i) => {
    if (typeof pair?.key !== 'string' || !pair.key.trim() || pair.key.length > 64) throw badInput(`${field}[${i}].key must be a non-empty string of at most 64 characters`, `${field}[${i}].key`);
    if (typeof pair.value !== 'string' || pair.value.length > 255) throw badInput(`${field}[${i}].value must be a string of at most 255 characters`, `${field}[${i}].value`);
    return { key: pair.key.trim(), value: pair.value.trim() };
  });
}

const valueOf = (pairs: KeyValue[], ...keys: string[]) =>
  pairs.find((p) => keys.includes(p.key.toLowerCase()) && p.value)?.value;

export class SessionService {
  private readonly em: EntityManager;
  constructor(em: EntityManager) { this.em = em; }

  /**
   * Starts a session. Benefit keys name the member: `memberId` or `policy` (the policy number is the
   * member id), optionally with `partnerCode`, or `vin` (a provisioned asset). `otherInfo` key
   * `ppuflag` = Y makes the session pay-per-use.
   */
  async start(input: SessionInput): Promise<{ session: RescueSession; member: RescueMember | null }> {
    if (typeof input.appId !== 'string' || !input.appId.trim() || input.appId.length > 128) {
      throw badInput('appId is required (a non-empty string of at most 128 characters)', 'appId');
    }
    const benefits = checkPairs(input.benefits, 'benefits');
    const otherInfo = checkPairs(input.otherInfo, 'otherInfo');
    const ppu = valueOf(otherInfo, 'ppuflag');
    if (ppu !== undefined && !/^[YN]$/i.test(ppu)) throw badInput('otherInfo ppuflag must be Y or N', 'otherInfo.ppuflag');
    const vin = valueOf(benefits, 'vin');
    if (vin !== undefined && !/^[A-Za-z0-9]{17}$/.test(vin)) throw badInput('benefits vin must be 17 letters or digits', 'benefits.vin');
    const member = await this.findMember(benefits);
    const session = this.em.create(RescueSession, {
      sessionId: crypto.randomUUID(), appId: input.appId.trim(), benefits, otherInfo,
      payPerUse: ppu?.toUpperCase() === 'Y', memberRef: member?.id ?? null,
    } as never);
    await this.em.flush();
    return { session, member };
  }

  private async findMember(benefits: KeyValue[]): Promise<RescueMember | null> {
    const partnerCode = valueOf(benefits, 'partnercode', 'partnercd');
    const memberId = valueOf(benefits, 'memberid', 'policy', 'policynumber');
    if (memberId) {
      const found = await this.em.find(RescueMember, { memberId, ...(partnerCode ? { partnerCode } : {}) }, { limit: 2 });
      if (found.length > 1) throw badInput('the member id is used by several partners: add a partnerCode benefit', 'benefits.partnerCode');
      if (found.length === 1) return found[0];
    }
    const vin = valueOf(benefits, 'vin');
    if (vin) {
      const asset = await this.em.findOne(RescueAsset, { vin: vin.toUpperCase(), ...(partnerCode ? { partnerCode } : {}) }, { orderBy: { createdAt: 'desc' } });
      if (asset) return this.em.findOne(RescueMember, { partnerCode: asset.partnerCode, memberId: asset.memberId });
    }
    return null;
  }

  /** The caller's session; an unknown id (or another organisation's) is NOT_FOUND, a wrong appId a 400. */
  async get(sessionId: string | null | undefined, appId?: string | null): Promise<RescueSession> {
    if (typeof sessionId !== 'string' || !sessionId.trim()) throw badInput('sessionId is required', 'sessionId');
    const session = await this.em.findOne(RescueSession, { sessionId });
    if (!session) throw notFound('Session', sessionId);
    if (appId != null && appId !== session.appId) throw badInput('appId does not match the session', 'appId');
    return session;
  }
}
