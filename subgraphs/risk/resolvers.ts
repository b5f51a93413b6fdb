import type { SubgraphContext } from '../platform/context.ts';
import { cachedAnswer } from './services/answer-cache.ts';
import { accidentSummary } from './services/accident-summary.ts';
import { describeArea, resolveArea, type AreaQuery } from './services/area.ts';
import { exportLinks, exportPage } from './services/exports.ts';
import { farsInfo, type FarsInfoArgs } from './services/fars-info.ts';
import { renderMap } from './map/map.ts';
import { riskInfo } from './services/risk-info.ts';
import { historicalTraffic, realtimeTraffic } from './services/traffic.ts';
import { appliedFilter, parseCrashFilter } from './filter/crash-filter.ts';
import { batchResolvers } from './batch/resolvers.ts';

type Ctx = SubgraphContext;
const lower = <T extends string>(value: T) => value.toLowerCase() as Lowercase<T>;

/** The root resolver validates the area and picks its cells; each data set is a field resolver, run only when selected. */
export const resolvers = {
  Query: {
    riskIndex: (_: unknown, a: { wkt: string; radius?: number | null; queryMethod?: string | null; filter?: Record<string, unknown> | null; resolution?: number | null }, ctx: Ctx) => {
      // The filter is checked first: a bad one is a 400 before any geometry work.
      const filter = parseCrashFilter(a.filter);
      return resolveArea(ctx.em, a.wkt, a.radius, a.queryMethod, filter, a.resolution);
    },
    ...batchResolvers.Query,
  },
  Mutation: batchResolvers.Mutation,
  RiskBatch: batchResolvers.RiskBatch,
  RiskReport: {
    area: (q: AreaQuery) => describeArea(q),
    filter: (q: AreaQuery) => appliedFilter(q.filter),
    riskInfo: (q: AreaQuery) => cachedAnswer(q, 'riskInfo', null, () => riskInfo(q)),
    accidentSummary: (q: AreaQuery) => cachedAnswer(q, 'accidentSummary', null, () => accidentSummary(q)),
    farsInfo: (q: AreaQuery, a: FarsInfoArgs) => cachedAnswer(q, 'farsInfo', a, () => farsInfo(q, a)),
    exports: (q: AreaQuery) => exportLinks(q),
    // Its next-page URL repeats the area as requested: the spelling is part of the key.
    exportPage: (q: AreaQuery, a: { data: 'CELLS' | 'CRASHES'; format: 'GEOJSON' | 'CSV'; first?: number | null; after?: string | null }) =>
      cachedAnswer(q, 'exportPage', { ...a, request: q.request }, () => exportPage(q, { data: lower(a.data), format: lower(a.format), first: a.first, after: a.after })),
    // Live: never cached.
    realtimeTraffic: (q: AreaQuery) => realtimeTraffic(q),
    historicalTraffic: (q: AreaQuery) => cachedAnswer(q, 'historicalTraffic', null, () => historicalTraffic(q)),
    map: (q: AreaQuery) => cachedAnswer(q, 'map', null, () => renderMap(q)),
    mapLayers: (q: AreaQuery) => cachedAnswer(q, 'mapLayers', null, () => renderMap(q, 'geojson')),
  },
};
