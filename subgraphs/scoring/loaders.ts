import type { EntityManager } from '@mikro-orm/core';
import { groupedLoader, keyedRowLoader } from '../platform/loaders.ts';
import { MvrRecord, User } from './entities.ts';

export const createLoaders = (em: EntityManager) => ({
  /** Plain rows (platform/db/rows.ts): resolvers only read users; services load entities themselves. */
  userById: keyedRowLoader(em, User, 'userId'),
  /** A user's MVR records, newest first (the first is the one a score uses). */
  mvrRecordsByUser: groupedLoader(em, MvrRecord, 'userId', { seq: 'desc' }),
});

export type ScoringLoaders = ReturnType<typeof createLoaders>;
