import type { CommittedEvent } from './bus.ts';

/** The JetStream stream of committed events, and the root of its subjects. */
export const EVENTS_STREAM = 'EVENTS';
export const EVENTS_SUBJECT_ROOT = 'events';

/** Bytes kept as they are in a subject token; every other byte (`.`, `*`, `>`, spaces, `~`, non-ASCII) becomes `~XX`. */
const PLAIN = /^[A-Za-z0-9_-]$/;

/**
 * One subject token from any string, injectively: organisation names and ids may hold `.`, `*`, `>` or
 * spaces, which NATS reads as token separators and wildcards, and event types hold `.`. The empty
 * string, which no escape produces, is `~`.
 */
export function subjectToken(value: string): string {
  if (!value) return '~';
  let token = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const char = String.fromCharCode(byte);
    token += PLAIN.test(char) ? char : `~${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return token;
}

/** `events.<area>.<organisation>.<type>`, each part one encoded token. */
export const subjectOf = (event: Pick<CommittedEvent, 'source' | 'orgId' | 'type'>) =>
  [EVENTS_SUBJECT_ROOT, subjectToken(event.source), subjectToken(event.orgId), subjectToken(event.type)].join('.');

/** The filter subject of one organisation's events, of every area and type. */
export const organisationFilter = (orgId: string) => `${EVENTS_SUBJECT_ROOT}.*.${subjectToken(orgId)}.*`;
