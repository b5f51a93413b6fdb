import type { EntityManager } from '@mikro-orm/core';
import { badInput, conflict, isConstraintConflict, notFound } from '../../platform/errors.ts';
import { EMAIL_PATTERN, PHONE_PATTERN, PROVISIONING_LIMITS, SERVICE_WEIGHTS, STATE_CODE_PATTERN } from '../rules.ts';
import { isCalendarDate, VIN_PATTERN, ZIP_PATTERN } from '../../platform/scalars.ts';
import { RescueAsset, RescueMember, RescuePlan, type RescueService } from '../entities.ts';

/** The benefit service names partners know, by rescue service. */
export const BENEFIT_TYPE: Record<RescueService, string> = { GAS: 'Gas', TOW: 'Tow', TIRE: 'Changetire', BATTERY: 'Battery', LOCKOUT: 'Lockout' };

export interface ProvisioningFields {
  productType?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  address1?: string | null;
  address2?: string | null;
  city?: string | null;
  state?: string | null;
  zip?: string | null;
  emailAddress?: string | null;
  phone?: string | null;
  companyName?: string | null;
  make?: string | null;
  model?: string | null;
  year?: number | null;
  vin?: string | null;
  effectiveEndDate?: string | null;
  milesPerTow?: number | null;
  numberOfEvents?: number | null;
  partnerPay?: boolean | null;
  serviceWeight?: string | null;
}

export interface ProvisioningKey { partnerCode: string; memberId: string; assetIntegrationId: string }

export interface Provisioning { member: RescueMember; asset: RescueAsset }

const TEXT_LIMITS: Partial<Record<keyof ProvisioningFields, number>> = PROVISIONING_LIMITS;

function checkKey(key: ProvisioningKey) {
  for (const name of ['partnerCode', 'memberId', 'assetIntegrationId'] as const) {
    const v = key[name];
    if (typeof v !== 'string' || !v.trim() || v.length > (name === 'partnerCode' ? 64 : 128)) throw badInput(`${name} is required (a non-empty string)`, name);
  }
}

/** Validates and normalises provisioning fields; `creating` also requires the names. */
function checkFields(f: ProvisioningFields, creating: boolean): ProvisioningFields {
  const out: ProvisioningFields = { ...f };
  for (const [name, max] of Object.entries(TEXT_LIMITS) as [keyof ProvisioningFields, number][]) {
    const v = f[name];
    if (v != null && (typeof v !== 'string' || v.length > max)) throw badInput(`${name} must be a string of at most ${max} characters`, name);
  }
  if (creating) {
    if (!f.firstName?.trim()) throw badInput('firstName is required', 'firstName');
    if (!f.lastName?.trim()) throw badInput('lastName is required', 'lastName');
  } else {
    if (f.firstName !== undefined && !f.firstName?.trim()) throw badInput('firstName cannot be empty', 'firstName');
    if (f.lastName !== undefined && !f.lastName?.trim()) throw badInput('lastName cannot be empty', 'lastName');
  }
  if (f.state != null) {
    if (!STATE_CODE_PATTERN.test(f.state)) throw badInput('state must be a two-letter code', 'state');
    out.state = f.state.toUpperCase();
  }
  if (f.zip != null && !ZIP_PATTERN.test(f.zip)) throw badInput('zip must be ##### or #####-####', 'zip');
  if (f.emailAddress != null && !EMAIL_PATTERN.test(f.emailAddress)) throw badInput('emailAddress is not an email address', 'emailAddress');
  if (f.phone != null && !PHONE_PATTERN.test(f.phone)) throw badInput('phone must be 7 to 20 digits (spaces, dashes, dots, parentheses and a leading + allowed)', 'phone');
  if (f.vin != null) {
    if (!VIN_PATTERN.test(f.vin)) throw badInput('vin must be exactly 17 letters or digits', 'vin');
    out.vin = f.vin.toUpperCase();
  }
  const maxYear = new Date().getUTCFullYear() + 1;
  if (f.year != null && (!Number.isInteger(f.year) || f.year < 1900 || f.year > maxYear)) throw badInput(`year must be from 1900 to ${maxYear}`, 'year');
  if (f.effectiveEndDate != null && !isCalendarDate(f.effectiveEndDate)) throw badInput('effectiveEndDate must be a real day as YYYY-MM-DD', 'effectiveEndDate');
  if (f.milesPerTow != null && (!Number.isFinite(f.milesPerTow) || f.milesPerTow < 0 || f.milesPerTow > 500)) throw badInput('milesPerTow must be from 0 to 500', 'milesPerTow');
  if (f.numberOfEvents != null && (!Number.isInteger(f.numberOfEvents) || f.numberOfEvents < 0 || f.numberOfEvents > 100)) throw badInput('numberOfEvents must be an integer from 0 to 100', 'numberOfEvents');
  if (f.serviceWeight != null) {
    const w = f.serviceWeight.trim().toUpperCase();
    if (!SERVICE_WEIGHTS.includes(w)) throw badInput(`serviceWeight must be one of ${SERVICE_WEIGHTS.join(', ')}`, 'serviceWeight');
    out.serviceWeight = w;
  }
  if (f.productType != null) out.productType = f.productType.trim().toUpperCase();
  return out;
}

const memberFields = ['productType', 'firstName', 'lastName', 'address1', 'address2', 'city', 'state', 'zip', 'emailAddress', 'phone', 'companyName', 'effectiveEndDate', 'milesPerTow', 'numberOfEvents', 'partnerPay', 'serviceWeight'] as const;
const assetFields = ['make', 'model', 'year', 'vin'] as const;

export class MemberService {
  private readonly em: EntityManager;
  constructor(em: EntityManager) { this.em = em; }

  private async checkPlan(productType: string | null | undefined) {
    if (productType == null) return;
    const plan = await this.em.findOne(RescuePlan, { planCode: productType });
    if (!plan) {
      const codes = (await this.em.find(RescuePlan, {}, { orderBy: { planCode: 'asc' } })).map((p) => p.planCode);
      throw badInput(`productType must be one of ${codes.join(', ')}`, 'productType');
    }
  }

  /** The form post: creates the member (if new) and the asset; an existing member/asset pair is a CONFLICT. */
  async provision(key: ProvisioningKey, fields: ProvisioningFields): Promise<Provisioning> {
    checkKey(key);
    const f = checkFields(fields, true);
    f.productType ??= 'BASIC';
    await this.checkPlan(f.productType);
    const existing = await this.em.findOne(RescueMember, { partnerCode: key.partnerCode, memberId: key.memberId });
    const member = existing ?? this.em.create(RescueMember, { partnerCode: key.partnerCode, memberId: key.memberId } as never);
    for (const name of memberFields) if (f[name] !== undefined) (member as unknown as Record<string, unknown>)[name] = f[name];
    member.partnerPay = f.partnerPay ?? member.partnerPay ?? false;
    const asset = this.em.create(RescueAsset, { ...key, make: f.make ?? null, model: f.model ?? null, year: f.year ?? null, vin: f.vin ?? null } as never);
    try {
      await this.em.flush();
    } catch (error) {
      if (isConstraintConflict(error)) throw conflict(`Asset '${key.assetIntegrationId}' of member '${key.memberId}' (partner ${key.partnerCode}) is already provisioned; use PUT to change it`);
      throw error;
    }
    return { member, asset };
  }

  async get(key: ProvisioningKey): Promise<Provisioning> {
    checkKey(key);
    const [member, asset] = await Promise.all([
      this.em.findOne(RescueMember, { partnerCode: key.partnerCode, memberId: key.memberId }),
      this.em.findOne(RescueAsset, key),
    ]);
    if (!member || !asset) throw notFound('Provisioned asset', `${key.partnerCode}/${key.memberId}/${key.assetIntegrationId}`);
    return { member, asset };
  }

  /** Changes the fields sent (null clears an optional one). */
  async update(key: ProvisioningKey, fields: ProvisioningFields): Promise<Provisioning> {
    const f = checkFields(fields, false);
    if (f.productType === null) throw badInput('productType cannot be cleared', 'productType');
    await this.checkPlan(f.productType);
    const { member, asset } = await this.get(key);
    for (const name of memberFields) if (f[name] !== undefined) (member as unknown as Record<string, unknown>)[name] = f[name];
    if (f.partnerPay === null) member.partnerPay = false;
    for (const name of assetFields) if (f[name] !== undefined) (asset as unknown as Record<string, unknown>)[name] = f[name];
    await this.em.flush();
    return { member, asset };
  }

}
