import type { EntityManager } from '@mikro-orm/core';
import { recordEvent } from '../platform/webhooks/outbox.ts';
import { MvrRecord, type User } from './entities.ts';
import { today } from './model/dates.ts';
import { PrequalService, type PrequalResult, type ScoredUser } from './prequal.ts';

const USERS_PATH = '/shared-mobility-insights/v2/users';
const userPath = (userId: string) => `${USERS_PATH}/${encodeURIComponent(userId)}`;

/** The MVR sources as REST paths spell them (`/users/{userId}/sourcea-mvr`). */
const restMvrSource = (source: MvrRecord['source']) => (source === 'SOURCE_A' ? 'sourcea' : 'sourceb');

/** Records mvr.created: partners learn that an MVR arrived, never what it says. */
export function recordMvrCreated(em: EntityManager, record: MvrRecord) {
  const source = restMvrSource(record.source);
  recordEvent(em, {
    type: 'mvr.created', resourceKey: `user:${record.userId}`, resourcePath: `${userPath(record.userId)}/${source}-mvr`,
    resource: { mvrId: record.id, userId: record.userId, source, createdAt: record.createdAt.toISOString() },
  });
}

/** The user fields a change can touch, as the REST user spells them. */
export type UserField = 'dateOfBirth' | 'homeZip' | 'enrollmentStatus';

/**
 * Records user.updated: the user as GET /users/{userId} returns it without the date of birth,
 * which events never carry, and `changedFields` (which may name it). After the flush that wrote
 * the change, so `updatedAt` is the stored one.
 */
export function recordUserUpdated(tx: EntityManager, user: User, changedFields: UserField[]) {
  recordEvent(tx, {
    type: 'user.updated', resourceKey: `user:${user.userId}`, resourcePath: userPath(user.userId),
    resource: {
      userId: user.userId, userID: user.userId, homeZip: user.homeZip, enrollmentStatus: user.enrollmentStatus,
      createdAt: user.createdAt.toISOString(), updatedAt: user.updatedAt.toISOString(), changedFields,
    },
  });
}

/** The score as GET /users/{userId}/prequal-coverage-score returns it; with data missing, what is missing. */
function restScore(result: PrequalResult): Record<string, unknown> {
  if (result.kind === 'missing') return { userId: result.userId, score: null, missingFields: result.missingFields };
  return {
    userId: result.userId, score: result.score, modelVersion: result.modelVersion, mvrId: result.mvrRecord.id,
    mvrSource: restMvrSource(result.mvrRecord.source), asOf: result.asOf, reasonCodes: result.reasons.map((r) => r.code), reasons: result.reasons,
  };
}

/** What a reader of the score sees: whether there is one, its value, its reasons. */
const seen = (result: PrequalResult) => (result.kind === 'score' ? `${result.score}:${result.reasons.map((r) => r.code).join()}` : null);

/** The newest MVR of a user (the one a score uses), if any. */
export const latestMvr = (em: EntityManager, userId: string) => em.findOne(MvrRecord, { userId }, { orderBy: { seq: 'desc' } });

/**
 * Scores the user before and after a change, on the same day, and records score.changed (with
 * `previousScore`) when the score a reader sees differs: a change of date of birth, ZIP or latest
 * MVR that leaves the score and its reasons as they were records nothing.
 */
export function recordScoreChange(tx: EntityManager, before: { user: ScoredUser; mvr: MvrRecord | null }, after: { user: ScoredUser; mvr: MvrRecord | null }) {
  const prequal = new PrequalService(tx);
  const asOf = today();
  const was = prequal.score(before.user, before.user.userId, before.mvr ?? undefined, asOf);
  const now = prequal.score(after.user, after.user.userId, after.mvr ?? undefined, asOf);
  if (seen(was) === seen(now)) return;
  recordEvent(tx, {
    type: 'score.changed', resourceKey: `user:${now.userId}`, resourcePath: `${userPath(now.userId)}/prequal-coverage-score`,
    resource: { ...restScore(now), previousScore: was.kind === 'score' ? was.score : null },
  });
}
