import type {
  MvrSource, RestMvrFragment, RestMvrRecordFragment, RestScoreFragment, RestUserFragment,
} from './rest.generated.ts';

/**
 * The REST body of each scoring resource, one function each: REST answers feed them the GraphQL result,
 * events the stored entities, so that a webhook payload is what GET answers by construction.
 */

/** The MVR sources as REST paths spell them (`/users/{userId}/sourcea-mvr`). */
export const REST_MVR_SOURCE = { SOURCE_A: 'sourcea', SOURCE_B: 'sourceb' } as const satisfies
  Record<MvrSource, string>;

/** A user: both id spellings, the enrollment status in lower case. */
export const restUser = (u: RestUserFragment) => ({
  userId: u.userId, userID: u.userId, dateOfBirth: u.dateOfBirth, homeZip: u.homeZip,
  enrollmentStatus: u.enrollmentStatus.toLowerCase(), createdAt: u.createdAt, updatedAt: u.updatedAt,
});

/** An MVR record without what the report says: its id (`mvrId`), the source as in the path. */
export const restMvrRecord = (r: RestMvrRecordFragment) => ({
  mvrId: r.id, userId: r.userId, source: REST_MVR_SOURCE[r.source], createdAt: r.createdAt,
});

/** An MVR record with the report normalised into its summary. */
export const restMvr = (r: RestMvrFragment) => ({ ...restMvrRecord(r), summary: r.summary });

/** A coverage score: the MVR it used by id and source, the reason codes alone and with their descriptions. */
export const restScore = (s: RestScoreFragment) => ({
  userId: s.userId, score: s.score, modelVersion: s.modelVersion,
  mvrId: s.mvrRecordId, mvrSource: REST_MVR_SOURCE[s.mvrRecord.source], asOf: s.asOf,
  reasonCodes: s.reasons.map((r) => r.code), reasons: s.reasons,
});
