import type { EntityManager } from '@mikro-orm/core';
import { keyedLoader } from '../platform/loaders.ts';
import { User } from './entities.ts';

export const createLoaders = (em: EntityManager) => ({
  userById: keyedLoader(em, User, 'userId'),
});

export type ScoringLoaders = ReturnType<typeof createLoaders>;
