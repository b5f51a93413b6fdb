import type { EntityManager } from '@mikro-orm/core';
import { MvrRecord } from '../entities.ts';
import type { Json } from './common.ts';
import { keyringFor } from './crypto.ts';
import type { MvrSummary } from './summary.ts';
import { summarise } from './validate.ts';

/** The newest MVR of a user (the one a score uses), if any. */
export const latestMvr = (em: EntityManager, userId: string) => em.findOne(MvrRecord, { userId }, { orderBy: { seq: 'desc' } });

/** A stored report's text exactly as received, decrypted. */
export function storedReportText(em: EntityManager, record: MvrRecord): string {
  return keyringFor(em).vault(record.keyId).decrypt(record.reportCiphertext as Buffer, record.id);
}

/** The normalised summary of a stored record (derived again from the decrypted report). */
export function storedSummary(em: EntityManager, record: MvrRecord): MvrSummary {
  return summarise(record.source, JSON.parse(storedReportText(em, record)) as Json);
}
