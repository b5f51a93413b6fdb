import type { EntityManager } from '@mikro-orm/core';
import { badInput } from '../../platform/errors.ts';
import { MvrRecord } from '../entities.ts';
import { recordMvrCreated } from '../events.ts';
import { recordScoreChange } from '../prequal.ts';
import { UserService } from '../service.ts';
import { keyringFor } from './crypto.ts';
import { expandTestRecord } from './sandbox-records.ts';
import { currentVault } from './keyring-db.ts';
import type { MvrSource, MvrSummary } from './summary.ts';
import { latestMvr, storedReportText, storedSummary } from './stored.ts';
import { parseReportText, validateReport } from './validate.ts';

export interface MvrInput {
  /** The report as parsed JSON (GraphQL clients); stored as its JSON text. */
  report?: unknown;
  /** The report text exactly as received (REST); stored byte for byte. */
  reportJson?: string | null;
}

/** MVR intake and reading: validation, append-only storage, encryption at rest. */
export class MvrService {
  private readonly em: EntityManager;
  constructor(em: EntityManager) { this.em = em; }

  /**
   * Validates and stores a full MVR for an existing user. The stored text is `reportJson` as
   * received, or the JSON text of `report` (in a sandbox, a test record's report).
   * Records are never updated; a new one supersedes.
   */
  async create(userId: string, source: MvrSource, input: MvrInput): Promise<MvrRecord> {
    const hasText = input.reportJson !== undefined && input.reportJson !== null;
    const hasValue = input.report !== undefined && input.report !== null;
    if (hasText === hasValue) throw badInput('Send the report exactly once: as `report` (JSON) or as `reportJson` (its text)', 'report');
    const user = await new UserService(this.em).get(userId);
    const sent = hasText ? (input.reportJson as string) : JSON.stringify(input.report);
    const text = expandTestRecord(this.em, source, sent);
    validateReport(source, hasText || text !== sent ? parseReportText(text) : input.report);

    const vault = await currentVault(this.em, keyringFor(this.em));
    const previous = await latestMvr(this.em, userId);
    const id = crypto.randomUUID();
    const record = this.em.create(MvrRecord, {
      id, userId, source, reportCiphertext: vault.encrypt(text, id), keyId: vault.keyId, createdAt: new Date(),
    } as never);
    recordMvrCreated(this.em, record);
    recordScoreChange(this.em, { user, mvr: previous }, { user, mvr: record });
    await this.em.flush();
    return record;
  }

  /** The report text exactly as stored. */
  reportText(record: MvrRecord): string {
    return storedReportText(this.em, record);
  }

  /** The normalised summary of a stored record (derived again from the decrypted report). */
  summary(record: MvrRecord): MvrSummary {
    return storedSummary(this.em, record);
  }
}
