import type { AreaEvents } from '../platform/webhooks/events.ts';

/** The events the scoring area records (events.ts) and the subscription fields that follow a user and its score. */
export const scoringEvents = {
  types: ['mvr.created', 'user.updated', 'score.changed'],
  live: {
    userUpdated: { query: 'user', argument: 'userId', kind: 'user', events: ['user.updated', 'mvr.created', 'score.changed'] },
    coverageScoreChanged: { query: 'prequalCoverageScore', argument: 'userId', kind: 'user', events: ['score.changed'] },
  },
} as const satisfies AreaEvents;

export type ScoringEventType = (typeof scoringEvents.types)[number];
