import { LockMode, type EntityManager } from '@mikro-orm/core';
import { conflict, isConstraintConflict, notFound } from '../../platform/errors.ts';
import { ACTIVATION_STATUSES, RegisteredUser, type ActivationStatus } from '../entities.ts';
import { checkDate, checkId, idOrGenerated, oneOf, optionalText, today } from './common.ts';

export interface ActivationFields {
  status?: unknown;
  reason?: unknown;
  effectiveDate?: unknown;
}

export class RegisteredUserService {
  private readonly em: EntityManager;
  constructor(em: EntityManager) { this.em = em; }

  async get(userIdIn: string): Promise<RegisteredUser> {
    const userId = checkId(userIdIn, 'userId');
    const user = await this.em.findOne(RegisteredUser, { userId });
    if (!user) throw notFound('RegisteredUser', userId);
    return user;
  }

  /**
   * The user, row-locked for share until the transaction ends, and active: a deactivation cannot
   * slip in between this check and the new device or product it guards.
   */
  async requireActive(userId: string, what: string): Promise<RegisteredUser> {
    checkId(userId, 'userId');
    const user = await this.em.findOne(RegisteredUser, { userId }, { lockMode: LockMode.PESSIMISTIC_READ });
    if (!user) throw notFound('RegisteredUser', userId);
    if (user.status !== 'Active') throw conflict(`User '${userId}' is deactivated and cannot take ${what}; activate the user first`, { userId });
    return user;
  }

  async create(input: { userId?: unknown }): Promise<RegisteredUser> {
    const userId = idOrGenerated(input.userId, 'userId');
    const user = this.em.create(RegisteredUser, { userId, status: 'Active' } as never);
    try {
      await this.em.flush();
    } catch (error) {
      if (isConstraintConflict(error)) throw conflict(`A user with id '${userId}' already exists`, { field: 'userId' });
      throw error;
    }
    return user;
  }

  /** REPLACE (PUT) sets the whole activation: status required, absent reason cleared, date today. MERGE (PATCH) changes what is sent. */
  async setActivation(userId: string, fields: ActivationFields, mode: 'REPLACE' | 'MERGE'): Promise<RegisteredUser> {
    const status: ActivationStatus | undefined = mode === 'REPLACE' || fields.status !== undefined
      ? oneOf(ACTIVATION_STATUSES, fields.status, 'status') : undefined;
    const reason = fields.reason === undefined ? undefined : optionalText(fields.reason, 'reason', 500);
    const effectiveDate = fields.effectiveDate === undefined ? undefined : checkDate(fields.effectiveDate, 'effectiveDate', today());
    const user = await this.get(userId);
    if (mode === 'REPLACE') {
      user.status = status!;
      user.activationReason = reason ?? null;
      user.activationEffectiveDate = effectiveDate ?? today();
    } else {
      if (status !== undefined && status !== user.status) {
        user.status = status;
        if (effectiveDate === undefined) user.activationEffectiveDate = today();
      }
      if (reason !== undefined) user.activationReason = reason;
      if (effectiveDate !== undefined) user.activationEffectiveDate = effectiveDate;
    }
    await this.em.flush();
    return user;
  }
}
