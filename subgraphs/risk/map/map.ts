import { cellColumn } from '../geometry/cells.ts';
import { cellArray, type AreaQuery } from '../services/area.ts';
import { riskInfo } from '../services/risk-info.ts';
import { MAX_MAP_POINTS, MAX_POINTS_KM2, type CellFigures, type MapFormat, type MapInput } from './render.ts';
import { readRows } from '../services/read.ts';
import { crashFilterSql } from '../filter/apply.ts';
import { crashFilterText } from '../filter/crash-filter.ts';

/** The crash points of the area (longitude, latitude, fatalities) when there are few enough to draw. */
async function crashPoints(q: AreaQuery, fatal: number): Promise<MapInput['points']> {
  if (q.resolution === null || q.coverage.coveredKm2 > MAX_POINTS_KM2 || fatal === 0 || fatal > MAX_MAP_POINTS) return [];
  type Point = { longitude: number; latitude: number; fatalities: number };
  const where = crashFilterSql(q.filter);
  const rows = await readRows<Point>(q.em,
    `select "longitude", "latitude", "fatalities" from "risk"."risk_crashes" where "${cellColumn(q.resolution)}" = any(?::text[])${where.sql} limit ?`,
    [cellArray(q.cells), ...where.params, MAX_MAP_POINTS]);
  return rows.map((r) => [r.longitude, r.latitude, r.fatalities]);
}

/**
 * The map of a Risk Index report, as an SVG picture or as the GeoJSON layers of the interactive page:
 * the figures and crash points (of the crashes the filter matches) are read here, the drawing is done in the Risk Index workers, with
 * their time, memory and queue limits (422, 503).
 */
export async function renderMap(q: AreaQuery, format: MapFormat = 'svg'): Promise<string> {
  const info = await riskInfo(q);
  const cells = await q.filteredCells();
  const figures: Record<string, CellFigures> = {};
  for (const c of cells) {
    figures[c.cell] = { index: c.riskIndex, fatalCrashes: c.fatal, fatalities: c.fatalities, fatalCrashesPerKm2Year: c.fatalRate, fatalitiesPerKm2Year: c.fatalityRate };
  }
  return q.pool.renderMap({
    wkt: q.request.wkt, radius: q.request.radius,
    states: q.coverage.parts.map((p) => p.state), coverageMessage: q.coverage.message,
    resolution: q.resolution, cells: q.cells, figures,
    index: info.index, fatalCrashes: info.fatalCrashes, fatalities: info.fatalities, fatalCrashesPerKm2Year: info.fatalCrashesPerKm2Year,
    points: format === 'svg' ? await crashPoints(q, info.fatalCrashes) : [],
    filter: q.filter && crashFilterText(q.filter),
  }, format);
}
