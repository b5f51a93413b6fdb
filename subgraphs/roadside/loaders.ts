import type { EntityManager } from '@mikro-orm/core';
import { groupedLoader, groupedRowLoader, keyedLoader, keyedRowLoader } from '../platform/loaders.ts';
import { ProviderFile, RescueFeedback, RescueMember, RescueProvider, RescueRequest, RescueStatusEvent } from './entities.ts';

/** A rescue's status history, oldest first (the GraphQL field and the events' payloads). */
export const HISTORY_ORDER = { at: 'asc', id: 'asc' } as const;

export const createLoaders = (em: EntityManager) => ({
  rescueById: keyedRowLoader(em, RescueRequest, 'reqId'),
  historyByRescue: groupedRowLoader(em, RescueStatusEvent, 'reqId', HISTORY_ORDER),
  feedbackByRescue: keyedLoader(em, RescueFeedback, 'reqId'),
  filesByRescue: groupedLoader(em, ProviderFile, 'reqId', { createdAt: 'asc' }),
  providerById: keyedRowLoader(em, RescueProvider, 'providerId'),
  memberById: keyedLoader(em, RescueMember, 'id'),
});

export type RoadsideLoaders = ReturnType<typeof createLoaders>;
