import type { EntityManager } from '@mikro-orm/core';
import { notFound } from '../platform/errors.ts';
import type { MvrRecord, User } from './entities.ts';
import { MvrService } from './mvr/service.ts';
import { today } from './model/dates.ts';
import { coverageScore, type CoverageScore } from './model/score.ts';

/** The fields a score needs that a user may lack, in the names partners send them. */
export type MissingField = 'dateOfBirth' | 'homeZip' | 'mvr';

/** What a score reads of a user. */
export type ScoredUser = Pick<User, 'userId' | 'dateOfBirth' | 'homeZip'>;

export type PrequalResult =
  | ({ kind: 'score'; userId: string; mvrRecord: MvrRecord; asOf: string } & CoverageScore)
  | { kind: 'missing'; userId: string; missingFields: MissingField[] };

/**
 * The pre-qualification coverage score of a user from the user's data and latest MVR. The
 * enrollment status is deliberately not read: it never affects the score.
 */
export class PrequalService {
  private readonly em: EntityManager;
  constructor(em: EntityManager) { this.em = em; }

  score(user: ScoredUser | null, userId: string, latest: MvrRecord | undefined, asOf: string = today()): PrequalResult {
    if (!user) throw notFound('User', userId);
    const missingFields: MissingField[] = [];
    if (!user.dateOfBirth) missingFields.push('dateOfBirth');
    if (!user.homeZip) missingFields.push('homeZip');
    if (!latest) missingFields.push('mvr');
    if (missingFields.length || !latest) return { kind: 'missing', userId: user.userId, missingFields };
    const mvr = new MvrService(this.em).summary(latest);
    const result = coverageScore({ dateOfBirth: user.dateOfBirth as string, homeZip: user.homeZip as string, mvr, asOf });
    return { kind: 'score', userId: user.userId, mvrRecord: latest, asOf, ...result };
  }
}
