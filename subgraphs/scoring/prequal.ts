import type { EntityManager } from '@mikro-orm/core';
import { notFound } from '../platform/errors.ts';
import type { MvrRecord, User } from './entities.ts';
import { recordScoreChanged } from './events.ts';
import { storedSummary } from './mvr/stored.ts';
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
    const mvr = storedSummary(this.em, latest);
    const result = coverageScore({ dateOfBirth: user.dateOfBirth as string, homeZip: user.homeZip as string, mvr, asOf });
    return { kind: 'score', userId: user.userId, mvrRecord: latest, asOf, ...result };
  }
}

/** What a reader of the score sees: whether there is one, its value, its reasons. */
const seen = (result: PrequalResult) => (result.kind === 'score' ? `${result.score}:${result.reasons.map((r) => r.code).join()}` : null);

interface ScoreInputs { user: ScoredUser; mvr: MvrRecord | null }

/**
 * Scores the user before and after a change, on the same day, and records score.changed (with
 * `previousScore`) when the score a reader sees differs: a change of date of birth, ZIP or latest
 * MVR that leaves the score and its reasons as they were records nothing.
 */
export function recordScoreChange(tx: EntityManager, before: ScoreInputs, after: ScoreInputs) {
  const prequal = new PrequalService(tx);
  const asOf = today();
  const was = prequal.score(before.user, before.user.userId, before.mvr ?? undefined, asOf);
  const now = prequal.score(after.user, after.user.userId, after.mvr ?? undefined, asOf);
  if (seen(was) !== seen(now)) recordScoreChanged(tx, was, now);
}
