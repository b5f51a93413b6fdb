import type { EntityManager } from '@mikro-orm/core';
import { groupedLoader, keyedLoader } from '../platform/loaders.ts';
import { MvrRecord, User } from './entities.ts';

export const createLoaders = (em: EntityManager) => ({
  userById: keyedLoader(em, User, 'userId'),
  /** A user's MVR records, newest first (the first is the one a score uses). */
  mvrRecordsByUser: groupedLoader(em, MvrRecord, 'userId', { seq: 'desc' }),
});

export type ScoringLoaders = ReturnType<typeof createLoaders>;
