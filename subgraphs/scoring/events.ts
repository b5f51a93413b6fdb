import type { EntityManager } from '@mikro-orm/core';
import { recordEvent } from '../platform/webhooks/outbox.ts';
import type { EnrollmentStatus, MvrRecord, User } from './entities.ts';
import type { PrequalResult } from './prequal.ts';
import { REST_MVR_SOURCE, restMvrRecord, restScore, restUser } from './representation.ts';
import type { EnrollmentStatus as GraphqlEnrollmentStatus } from './rest.generated.ts';

const USERS_PATH = '/shared-mobility-insights/v2/users';
const userPath = (userId: string) => `${USERS_PATH}/${encodeURIComponent(userId)}`;

/** The stored enrollment status as GraphQL spells it. */
const graphqlEnrollment = (status: EnrollmentStatus): GraphqlEnrollmentStatus =>
  ({ accepted: 'ACCEPTED', pending: 'PENDING', rejected: 'REJECTED' } as const)[status];

/** Records mvr.created: partners learn that an MVR arrived, never what it says. */
export function recordMvrCreated(em: EntityManager, record: MvrRecord) {
  const resource = restMvrRecord({
    id: record.id, userId: record.userId, source: record.source, createdAt: record.createdAt.toISOString(),
  });
  recordEvent(em, {
    type: 'mvr.created', resourceKey: `user:${record.userId}`,
    resourcePath: `${userPath(record.userId)}/${REST_MVR_SOURCE[record.source]}-mvr`, resource,
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
  const { dateOfBirth: _never, ...resource } = restUser({
    userId: user.userId, dateOfBirth: null, homeZip: user.homeZip ?? null,
    enrollmentStatus: graphqlEnrollment(user.enrollmentStatus),
    createdAt: user.createdAt.toISOString(), updatedAt: user.updatedAt.toISOString(),
  });
  recordEvent(tx, {
    type: 'user.updated', resourceKey: `user:${user.userId}`, resourcePath: userPath(user.userId),
    resource: { ...resource, changedFields },
  });
}

/** The score as GET /users/{userId}/prequal-coverage-score returns it; with data missing, what is missing. */
function scoreResource(result: PrequalResult) {
  if (result.kind === 'missing') return { userId: result.userId, score: null, missingFields: result.missingFields };
  const { userId, score, modelVersion, mvrRecord, asOf, reasons } = result;
  return restScore({
    userId, score, modelVersion, mvrRecordId: mvrRecord.id, mvrRecord: { source: mvrRecord.source }, asOf, reasons,
  });
}

/** Records score.changed: the score as GET returns it now, with the score a reader saw before. */
export function recordScoreChanged(tx: EntityManager, was: PrequalResult, now: PrequalResult) {
  recordEvent(tx, {
    type: 'score.changed', resourceKey: `user:${now.userId}`, resourcePath: `${userPath(now.userId)}/prequal-coverage-score`,
    resource: { ...scoreResource(now), previousScore: was.kind === 'score' ? was.score : null },
  });
}
