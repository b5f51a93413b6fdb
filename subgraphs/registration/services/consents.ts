import type { EntityManager } from '@mikro-orm/core';
import { badInput } from '../../platform/errors.ts';
import { CONSENT_ACTIONS, Consent, type ConsentAction } from '../entities.ts';
import { CONSENT_TYPES, findConsentType } from '../products.ts';
import { checkId, checkText, oneOf } from './common.ts';
import { RegisteredUserService } from './users.ts';
import { recordConsentEvent } from './events.ts';

/** How far a consent timestamp may lie in the future (clock skew of the partner's system). */
const FUTURE_SKEW_MS = 5 * 60 * 1000;

export interface ConsentInput {
  userId?: unknown;
  type?: unknown;
  version?: unknown;
  /** `granted` or `withdrawn` (any case); or use `granted: true|false`. */
  action?: unknown;
  granted?: unknown;
  timestamp?: unknown;
  source?: unknown;
}

export interface ConsentState {
  userId: string;
  /** The latest record per consent type (granted or withdrawn). */
  current: Consent[];
  /** Every record, oldest first. */
  history: Consent[];
}

function parseAction(input: ConsentInput): ConsentAction {
  if (input.action != null) {
    const action = oneOf(CONSENT_ACTIONS, input.action, 'action');
    if (input.granted != null && input.granted !== (action === 'granted')) throw badInput('granted contradicts action', 'granted');
    return action;
  }
  if (typeof input.granted !== 'boolean') throw badInput('Say whether the consent is granted or withdrawn: action (granted|withdrawn) or granted (true|false)', 'granted');
  return input.granted ? 'granted' : 'withdrawn';
}

function parseTimestamp(value: unknown): Date {
  if (value == null) return new Date();
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value) || Number.isNaN(Date.parse(value))) {
    throw badInput('timestamp must be an ISO 8601 instant (e.g. 2026-11-22T10:15:00Z)', 'timestamp');
  }
  const at = new Date(value);
  if (at.getTime() > Date.now() + FUTURE_SKEW_MS) throw badInput('timestamp must not be in the future', 'timestamp');
  return at;
}

/** Orders records in time: by the consent's timestamp, then by when it was recorded. */
const chronological = (a: Consent, b: Consent) =>
  a.timestamp.getTime() - b.timestamp.getTime() || a.recordedAt.getTime() - b.recordedAt.getTime();

/** The latest record per type, from records in chronological order. */
export function currentConsents(history: Consent[]): Consent[] {
  const latest = new Map<string, Consent>();
  for (const record of history) latest.set(record.type, record);
  return [...latest.values()].sort((a, b) => a.type.localeCompare(b.type));
}

export class ConsentService {
  private readonly em: EntityManager;
  constructor(em: EntityManager) { this.em = em; }

  /** Appends one grant or withdrawal; records are never changed afterwards. */
  async record(input: ConsentInput): Promise<Consent> {
    const userId = checkId(input.userId, 'userId');
    if (typeof input.type !== 'string' || !findConsentType(input.type)) {
      throw badInput(`type must be one of ${CONSENT_TYPES.map((c) => c.type).join(', ')}`, 'type');
    }
    const type = findConsentType(input.type)!.type;
    const version = checkText(input.version, 'version', 50);
    const action = parseAction(input);
    const timestamp = parseTimestamp(input.timestamp);
    const source = checkText(input.source, 'source', 100);
    await new RegisteredUserService(this.em).get(userId);
    const recordedAt = new Date();
    const consent = this.em.create(Consent, { id: crypto.randomUUID(), userId, type, version, action, timestamp, source, recordedAt } as never);
    recordConsentEvent(this.em, consent, recordedAt);
    await this.em.flush();
    return consent;
  }

  async history(userId: string): Promise<Consent[]> {
    const rows = await this.em.find(Consent, { userId });
    return rows.sort(chronological);
  }

  async state(userIdIn: unknown): Promise<ConsentState> {
    const userId = checkId(userIdIn, 'userId');
    await new RegisteredUserService(this.em).get(userId);
    const history = await this.history(userId);
    return { userId, current: currentConsents(history), history };
  }

  /** The consent types among `required` that the user has not currently granted. */
  async missing(userId: string, required: readonly string[]): Promise<string[]> {
    if (!required.length) return [];
    const current = currentConsents(await this.history(userId));
    const granted = new Set(current.filter((c) => c.action === 'granted').map((c) => c.type));
    return required.filter((type) => !granted.has(type));
  }
}
