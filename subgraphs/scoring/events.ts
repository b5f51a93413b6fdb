import type { EntityManager } from '@mikro-orm/core';
import { recordEvent } from '../platform/webhooks/outbox.ts';
import type { MvrRecord, User } from './entities.ts';
import type { PrequalResult } from './prequal.ts';

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

/** Records score.changed: the score as GET returns it now, with the score a reader saw before. */
export function recordScoreChanged(tx: EntityManager, was: PrequalResult, now: PrequalResult) {
  recordEvent(tx, {
    type: 'score.changed', resourceKey: `user:${now.userId}`, resourcePath: `${userPath(now.userId)}/prequal-coverage-score`,
    resource: { ...restScore(now), previousScore: was.kind === 'score' ? was.score : null },
  });
}
