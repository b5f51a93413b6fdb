import type { SubgraphContext } from '../platform/context.ts';
import { accidentSummary } from './services/accident-summary.ts';
import { describeArea, resolveArea, type AreaQuery } from './services/area.ts';
import { farsInfo } from './services/fars-info.ts';
import { renderMap } from './map/map.ts';
import { riskInfo } from './services/risk-info.ts';
import { historicalTraffic, realtimeTraffic } from './services/traffic.ts';

type Ctx = SubgraphContext;

/** The root resolver validates the area and picks its cells; each data set is a field resolver, run only when selected. */
export const resolvers = {
  Query: {
    riskIndex: (_: unknown, a: { wkt: string; radius?: number | null; queryMethod?: string | null }, ctx: Ctx) =>
      resolveArea(ctx.em, a.wkt, a.radius, a.queryMethod),
  },
  RiskReport: {
    area: (q: AreaQuery) => describeArea(q),
    riskInfo: (q: AreaQuery) => riskInfo(q),
    accidentSummary: (q: AreaQuery) => accidentSummary(q),
    farsInfo: (q: AreaQuery, a: { limit?: number | null }) => farsInfo(q, a.limit ?? 100),
    realtimeTraffic: (q: AreaQuery) => realtimeTraffic(q),
    historicalTraffic: (q: AreaQuery) => historicalTraffic(q),
    map: (q: AreaQuery) => renderMap(q),
    mapLayers: (q: AreaQuery) => renderMap(q, 'geojson'),
  },
};
