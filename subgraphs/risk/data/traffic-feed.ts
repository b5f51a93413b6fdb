import type { EntityManager } from '@mikro-orm/core';
import { z } from 'zod';
import { TrafficObservation } from '../entities.ts';
import { cellsOf } from '../geometry/cells.ts';
import { stateAt } from '../geometry/coverage.ts';

/**
 * The realtime traffic feed: `{ "generatedAt": ISO instant (optional), "observations": [ ... ] }`
 * or a bare array of observations. See docs/risk-index.md.
 */
const observation = z.object({
  sensorId: z.string().trim().min(1).max(64),
  observedAt: z.iso.datetime({ offset: true }),
  latitude: z.number().min(-90).max(90),
  longitude: z.number().min(-180).max(180),
  speedKph: z.number().min(0).max(300),
  volumeVph: z.number().min(0).max(100_000).nullish(),
});
export const trafficFeedSchema = z.union([
  z.object({ generatedAt: z.iso.datetime({ offset: true }).optional(), observations: z.array(observation) }),
  z.array(observation).transform((observations) => ({ generatedAt: undefined, observations })),
]);
export type TrafficFeed = z.infer<typeof trafficFeedSchema>;

export interface FeedSummary { read: number; loaded: number; outsideCoverage: number }

/** Validates a feed (throws with every problem listed) and stores its observations inside coverage. */
export async function ingestTrafficFeed(em: EntityManager, json: unknown): Promise<FeedSummary> {
  const parsed = trafficFeedSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 10).map((i) => `${i.path.join('.') || 'feed'}: ${i.message}`);
    throw new Error(`invalid traffic feed:\n  ${problems.join('\n  ')}`);
  }
  const rows = [];
  let outsideCoverage = 0;
  for (const o of parsed.data.observations) {
    if (!stateAt(o.longitude, o.latitude)) { outsideCoverage++; continue; }
    rows.push({
      id: crypto.randomUUID(), sensorId: o.sensorId, observedAt: new Date(o.observedAt), latitude: o.latitude, longitude: o.longitude,
      speedKph: o.speedKph, volumeVph: o.volumeVph ?? null, ...cellsOf(o.latitude, o.longitude),
    });
  }
  for (let i = 0; i < rows.length; i += 500) {
    await em.upsertMany(TrafficObservation, rows.slice(i, i + 500) as never, { onConflictFields: ['sensorId', 'observedAt'], onConflictExcludeFields: ['id'], disableIdentityMap: true } as never);
  }
  return { read: parsed.data.observations.length, loaded: rows.length, outsideCoverage };
}
