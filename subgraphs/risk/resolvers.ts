import type { SubgraphContext } from '../platform/context.ts';
import { accidentSummary } from './services/accident-summary.ts';
import { describeArea, resolveArea, type AreaQuery } from './services/area.ts';
import { exportLinks, exportPage } from './services/exports.ts';
import { farsInfo, type FarsInfoArgs } from './services/fars-info.ts';
import { renderMap } from './map/map.ts';
import { riskInfo } from './services/risk-info.ts';
import { historicalTraffic, realtimeTraffic } from './services/traffic.ts';

type Ctx = SubgraphContext;
const lower = <T extends string>(value: T) => value.toLowerCase() as Lowercase<T>;

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
    farsInfo: (q: AreaQuery, a: FarsInfoArgs) => farsInfo(q, a),
    exports: (q: AreaQuery) => exportLinks(q),
    exportPage: (q: AreaQuery, a: { data: 'CELLS' | 'CRASHES'; format: 'GEOJSON' | 'CSV'; first?: number | null; after?: string | null }) =>
      exportPage(q, { data: lower(a.data), format: lower(a.format), first: a.first, after: a.after }),
    realtimeTraffic: (q: AreaQuery) => realtimeTraffic(q),
    historicalTraffic: (q: AreaQuery) => historicalTraffic(q),
    map: (q: AreaQuery) => renderMap(q),
    mapLayers: (q: AreaQuery) => renderMap(q, 'geojson'),
  },
};
