import type { IdeExample } from '../platform/subgraph.ts';
import { RISK_MAP_EXAMPLE } from './rest.ts';

/**
 * The GraphQL IDE's example tabs for the Risk Index: validated against the API schema (test/gateway/ide.test.ts) and
 * typed by `npm run codegen`.
 */
export const ideExamples: readonly IdeExample[] = [
  {
    query: `# Risk Index (public: no token needed). The area is WKT, longitude first; radius (degrees, as the original service) buffers it.
# Crashes: NHTSA FARS 2013-2015. A map of the Loop (SVG, open it in the browser): ${RISK_MAP_EXAMPLE}
# (the report's \`map\` field gives the same SVG text).
query RiskIndex($wkt: WKT!, $radius: Float) {
  riskIndex(wkt: $wkt, radius: $radius) {
    area { coverage states cellsTouched message }
    riskInfo { index maxCellIndex cellsWithCrashes riskiestCells { cell riskIndex latitude longitude } }
    accidentSummary { total fatal injury propertyDamageOnly }
    realtimeTraffic { sensors meanSpeedKph asOf }
  }
}`,
    variables: { wkt: 'POINT(-87.6298 41.8781)', radius: 0.005 },
  },
  {
    query: `# Night-time crashes with a pedestrian, 2015 only: \`filter\` keeps the crashes it matches in every count, record and cell;
# riskInfo.index stays the index of every crash. REST: the same names as query parameters, lists comma-separated.
query RiskIndexFiltered($wkt: WKT!, $radius: Float, $filter: CrashFilter) {
  riskIndex(wkt: $wkt, radius: $radius, filter: $filter) {
    filter { key }
    riskInfo { index fatalCrashes fatalities }
    accidentSummary { byLight { name crashes } }
    farsInfo(first: 5) { total records { localDateTime LGT_CONDNAME PEDS FATALS } }
  }
}`,
    variables: { wkt: 'POINT(-87.6298 41.8781)', radius: 0.05, filter: { years: [2015], lightConditions: ['Dark - Not Lighted', 'Dark - Lighted'], pedestrians: true } },
  },
  {
    query: `# The same report's figures at once and its SVG map as a deferred part (@defer: Apollo Client 4's Defer20220824Handler,
# or any client accepting multipart/mixed; deferSpec=20220824; others get one answer). The map is drawn by a second
# evaluation, so it is fetched on its own: a field deferred inside riskIndex would come with the figures.
query RiskIndexMapDeferred($wkt: WKT!, $radius: Float) {
  riskIndex(wkt: $wkt, radius: $radius) {
    riskInfo { index maxCellIndex cellsWithCrashes }
    accidentSummary { total fatal injury propertyDamageOnly }
  }
  ... @defer(label: "map") {
    riskMap: riskIndex(wkt: $wkt, radius: $radius) { map }
  }
}`,
    variables: { wkt: 'POINT(-87.6298 41.8781)', radius: 0.01 },
  },
];
