import { length, polygonToLine } from '@turf/turf';
import { cellToLatLng, getHexagonAreaAvg, getHexagonEdgeLengthAvg, latLngToCell, POLYGON_TO_CELLS_FLAGS, polygonToCellsExperimental } from 'h3-js';
import type { Feature, MultiPolygon, Polygon } from 'geojson';
import { AppError } from '../../platform/errors.ts';
import { RESOLUTIONS, type Resolution } from '../entities.ts';
import { DEFAULT_BUDGET } from './budget.ts';

/** Most H3 cells a query may touch; the finest resolution that stays under it is used. */
export const MAX_CELLS = 3000;

const FINEST_FIRST = [...RESOLUTIONS].sort((a, b) => b - a) as Resolution[];
const COARSEST = Math.min(...RESOLUTIONS) as Resolution;

export interface CellSelection {
  resolution: Resolution;
  cells: string[];
}

/** Cells by area object and resolution: a state's outline (see clipToCoverage) is covered once per thread. */
const covered = new WeakMap<Feature, Map<Resolution, string[]>>();

function cover(area: Feature<Polygon | MultiPolygon>, res: Resolution): string[] {
  let byRes = covered.get(area);
  if (!byRes) covered.set(area, (byRes = new Map()));
  let cells = byRes.get(res);
  if (!cells) {
    const polygons = area.geometry.type === 'Polygon' ? [area.geometry.coordinates] : area.geometry.coordinates;
    cells = polygons.flatMap((rings) => polygonToCellsExperimental(rings, res, POLYGON_TO_CELLS_FLAGS.containmentOverlapping, true));
    byRes.set(res, cells);
  }
  return cells;
}

/** Every cell of `res` that overlaps the area (so a city block still gets its cell). */
export function cellsOverlapping(areas: Feature<Polygon | MultiPolygon>[], res: Resolution): string[] {
  const out = new Set<string>();
  for (const a of areas) for (const c of cover(a, res)) out.add(c);
  return [...out];
}

/** A cheap upper estimate of the cell count, so fine resolutions are never enumerated over huge areas. */
const estimate = (areaKm2: number, res: Resolution) => Math.ceil(areaKm2 / getHexagonAreaAvg(res, 'km2'));

/** Length of the areas' rings, km (turf's great-circle distance): the cells along an outline are counted from it. */
const perimeterKm = (areas: Feature<Polygon | MultiPolygon>[]) =>
  areas.reduce((km, area) => km + length(polygonToLine(area), { units: 'kilometers' }), 0);

/**
 * An upper estimate of the cells of `res` overlapping the areas, before any is enumerated: those inside
 * (area over a cell's) and those the outline crosses (its length over a cell's edge, both ways). A thin
 * buffered line is mostly outline: its cells are counted by its length, not by its small area.
 */
export const estimateCells = (areas: Feature<Polygon | MultiPolygon>[], areaKm2: number, res: Resolution) =>
  Math.ceil(areaKm2 / getHexagonAreaAvg(res, 'km2') + perimeterKm(areas) / getHexagonEdgeLengthAvg(res, 'km'));

/**
 * The cells of the area at the resolution asked, or (`resolution` null: automatic) the finest resolution
 * whose cells overlapping the area number at most `maxCells`; the coarsest resolution is the automatic
 * fallback (the covered states themselves bound its count). An asked resolution is held to `maxAsked`
 * cells, estimated before they are enumerated (refused: 422 GEOMETRY_TOO_COMPLEX, limit `cells`).
 */
export function selectCells(
  areas: Feature<Polygon | MultiPolygon>[], areaKm2: number, maxCells = MAX_CELLS,
  resolution: Resolution | null = null, maxAsked = DEFAULT_BUDGET.cells,
): CellSelection {
  if (resolution !== null) {
    const estimated = estimateCells(areas, areaKm2, resolution);
    if (estimated > maxAsked) throw tooManyCells(resolution, maxAsked, estimated);
    return { resolution, cells: cellsOverlapping(areas, resolution) };
  }
  for (const res of FINEST_FIRST) {
    if (res !== COARSEST && estimate(areaKm2, res) > maxCells) continue;
    const cells = cellsOverlapping(areas, res);
    if (cells.length <= maxCells || res === COARSEST) return { resolution: res, cells };
  }
  return { resolution: COARSEST, cells: cellsOverlapping(areas, COARSEST) };
}

/** The H3 cell of a point at every aggregation resolution. */
export function cellsOf(lat: number, lon: number) {
  return { h3r5: latLngToCell(lat, lon, 5), h3r7: latLngToCell(lat, lon, 7), h3r9: latLngToCell(lat, lon, 9) };
}

export const cellColumn = (res: Resolution) => `h3r${res}` as 'h3r5' | 'h3r7' | 'h3r9';

export function centroid(cell: string) {
  const [latitude, longitude] = cellToLatLng(cell);
  return { latitude: Math.round(latitude * 1e6) / 1e6, longitude: Math.round(longitude * 1e6) / 1e6 };
}

/** 422 GEOMETRY_TOO_COMPLEX (limit `cells`) for an asked resolution whose cells over the area would pass the budget. */
export const tooManyCells = (resolution: Resolution, max: number, got: number) => new AppError('GEOMETRY_TOO_COMPLEX',
  `the search area holds too many H3 cells at resolution ${resolution} (limit: cells, max ${max}, got about ${got}); `
    + 'ask for a coarser resolution, a smaller area, or leave resolution out (the finest that fits is chosen)',
  { limit: 'cells', max, got, resolution });
