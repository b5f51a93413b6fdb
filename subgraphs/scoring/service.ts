import type { EntityManager } from '@mikro-orm/core';
import { badInput, conflict, isConstraintConflict, notFound } from '../platform/errors.ts';
import { checkIdText } from '../platform/ids.ts';
import { isCalendarDate, ZIP_PATTERN } from '../platform/scalars.ts';
import { ENROLLMENT_STATUSES, User, type EnrollmentStatus } from './entities.ts';
import { recordUserUpdated } from './events.ts';
import { latestMvr } from './mvr/stored.ts';
import { recordScoreChange } from './prequal.ts';

export interface UserFields {
  dateOfBirth?: string | null;
  homeZip?: string | null;
}

const today = () => new Date().toISOString().slice(0, 10);

function checkFields(fields: UserFields, prefix: string) {
  const { dateOfBirth, homeZip } = fields;
  if (dateOfBirth != null) {
    if (!isCalendarDate(dateOfBirth)) throw badInput('dateOfBirth must be a real calendar day as YYYY-MM-DD', `${prefix}dateOfBirth`);
    if (dateOfBirth >= today()) throw badInput('dateOfBirth must be in the past', `${prefix}dateOfBirth`);
  }
  if (homeZip != null && !ZIP_PATTERN.test(homeZip)) throw badInput('homeZip must be ##### or #####-####', `${prefix}homeZip`);
}

/** Parses an enrollment status case-insensitively. */
export function parseEnrollmentStatus(value: unknown): EnrollmentStatus {
  const status = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (!(ENROLLMENT_STATUSES as readonly string[]).includes(status)) {
    throw badInput(`enrollmentStatus must be one of ${ENROLLMENT_STATUSES.join(', ')} (any case)`, 'enrollmentStatus');
  }
  return status as EnrollmentStatus;
}

export class UserService {
  private readonly em: EntityManager;
  constructor(em: EntityManager) { this.em = em; }

  async get(userId: string, em = this.em): Promise<User> {
    const user = await em.findOne(User, { userId });
    if (!user) throw notFound('User', userId);
    return user;
  }

  async create(input: { userId?: string | null } & UserFields): Promise<User> {
    if (input.userId != null && input.userId.trim() === '') throw badInput('userId must be a non-empty string when supplied', 'input.userId');
    if (input.userId != null) checkIdText(input.userId, 'input.userId');
    checkFields(input, 'input.');
    const userId = input.userId ?? crypto.randomUUID();
    const user = this.em.create(User, {
      userId, dateOfBirth: input.dateOfBirth ?? null, homeZip: input.homeZip ?? null, enrollmentStatus: 'pending',
    } as never);
    try {
      await this.em.flush();
    } catch (error) {
      if (isConstraintConflict(error)) throw conflict(`A user with id '${userId}' already exists`, { field: 'input.userId' });
      throw error;
    }
    return user;
  }

  /**
   * MERGE changes the fields present in `fields`; REPLACE sets every mutable field. A change
   * records user.updated, and score.changed when it moves the user's score; no change records nothing.
   */
  async update(userId: string, fields: UserFields, mode: 'MERGE' | 'REPLACE'): Promise<User> {
    checkFields(fields, 'input.');
    return this.em.transactional(async (tx) => {
      // The MVR (which no update changes) is read beside the user: one wait for the database less
      // while the transaction holds the embedded cluster, which every other request waits for.
      const [user, mvr] = await Promise.all([this.get(userId, tx), latestMvr(tx, userId)]);
      const before = { userId: user.userId, dateOfBirth: user.dateOfBirth, homeZip: user.homeZip };
      if (mode === 'REPLACE') {
        user.dateOfBirth = fields.dateOfBirth ?? null;
        user.homeZip = fields.homeZip ?? null;
      } else {
        if (fields.dateOfBirth !== undefined) user.dateOfBirth = fields.dateOfBirth;
        if (fields.homeZip !== undefined) user.homeZip = fields.homeZip;
      }
      const changed = (['dateOfBirth', 'homeZip'] as const).filter((field) => user[field] !== before[field]);
      if (!changed.length) return user;
      await tx.flush();
      recordUserUpdated(tx, user, changed);
      recordScoreChange(tx, { user: before, mvr }, { user, mvr });
      return user;
    });
  }

  /** Sets the enrollment status (which never affects the score); a change records user.updated. */
  async enroll(userId: string, status: unknown): Promise<User> {
    const parsed = parseEnrollmentStatus(status);
    return this.em.transactional(async (tx) => {
      const user = await this.get(userId, tx);
      if (user.enrollmentStatus === parsed) return user;
      user.enrollmentStatus = parsed;
      await tx.flush();
      recordUserUpdated(tx, user, ['enrollmentStatus']);
      return user;
    });
  }
}
