import type { EntityManager } from '@mikro-orm/core';
import { groupedLoader, keyedLoader } from '../platform/loaders.ts';
import { ProviderFile, RescueFeedback, RescueMember, RescueProvider, RescueRequest, RescueStatusEvent } from './entities.ts';

export const createLoaders = (em: EntityManager) => ({
  rescueById: keyedLoader(em, RescueRequest, 'reqId'),
  historyByRescue: groupedLoader(em, RescueStatusEvent, 'reqId', { at: 'asc', id: 'asc' }),
  feedbackByRescue: keyedLoader(em, RescueFeedback, 'reqId'),
  filesByRescue: groupedLoader(em, ProviderFile, 'reqId', { createdAt: 'asc' }),
  providerById: keyedLoader(em, RescueProvider, 'providerId'),
  memberById: keyedLoader(em, RescueMember, 'id'),
});

export type RoadsideLoaders = ReturnType<typeof createLoaders>;
