import { cellToLatLng, getHexagonAreaAvg, latLngToCell, POLYGON_TO_CELLS_FLAGS, polygonToCellsExperimental } from 'h3-js';
import type { Feature, MultiPolygon, Polygon } from 'geojson';
import { RESOLUTIONS, type Resolution } from '../entities.ts';

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

/**
 * Picks the finest resolution whose cells overlapping the area number at most `maxCells`;
 * the coarsest resolution is the fallback (the covered states themselves bound its count).
 */
export function selectCells(areas: Feature<Polygon | MultiPolygon>[], areaKm2: number, maxCells = MAX_CELLS): CellSelection {
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
