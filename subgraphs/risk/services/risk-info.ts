import { getHexagonAreaAvg } from 'h3-js';
import { MODEL_VERSION, riskModel, scoreArea, weightOf } from '../data/model.ts';
import { cellColumn } from '../geometry/cells.ts';
import type { CrashPoints } from '../geometry/inside.ts';
import type { CrashCell } from '../entities.ts';
import { cellArray, type AreaQuery } from './area.ts';
import { cellFigures, sig } from './cell-figures.ts';
import { readRows } from './read.ts';
import { crashFilterSql } from '../filter/apply.ts';
import type { CrashFilter } from '../filter/crash-filter.ts';

export const RISKIEST_CELLS = 10;
export const RISK_METHOD = 'The area\'s fatal crashes and fatalities (their mean is its weight w) inside its exact outline, per km² of it per year (the rate), '
  + 'shrunk by empirical Bayes towards the covered states\' mean rate ((α + w) / (β + km²·years)) and mapped to 0-100 as 100*R/(R+1), '
  + 'R = that rate / the reference rate (the median rate of the H3 resolution-7 cells with a fatal crash): the same at every cell resolution. '
  + 'Fatal crashes only (FARS), no traffic exposure (see docs/risk-index.md)';

const BUCKETS = [0, 20, 40, 60, 80];
const round = (v: number, d = 1) => Math.round(v * 10 ** d) / 10 ** d;

/**
 * Area of the cells touched, km²: exact (stored) for the cells with crashes, their mean for the others
 * (neighbouring cells of one resolution differ by well under 1%; computing each exactly costs ~20 µs a cell).
 */
function cellsKm2(q: AreaQuery, cells: CrashCell[]): number {
  if (q.resolution === null) return 0;
  const known = cells.reduce((s, c) => s + c.areaKm2, 0);
  const mean = cells.length ? known / cells.length : getHexagonAreaAvg(q.resolution, 'km2');
  return known + (q.cells.length - cells.length) * mean;
}

/** The fatal crashes of the area's cells (longitude, latitude, fatalities) that `filter` matches, read as one JSON text. */
async function cellCrashes(q: AreaQuery, filter: CrashFilter | null): Promise<CrashPoints> {
  const where = crashFilterSql(filter);
  const [row] = await readRows<{ points: string }>(q.em,
    `select coalesce(json_agg(json_build_array("longitude", "latitude", "fatalities")), '[]')::text as "points"
     from "risk"."risk_crashes" where "severity" = 'fatal' and "${cellColumn(q.resolution!)}" = any(?::text[])${where.sql}`,
    [cellArray(q.cells), ...where.params]);
  return Float64Array.from((JSON.parse(row.points) as number[][]).flat());
}

/** The fatal crashes inside the area's exact covered outline: the cells' crashes, tested in the geometry workers. */
async function crashesInside(q: AreaQuery, filter: CrashFilter | null) {
  const points = await cellCrashes(q, filter);
  if (points.length === 0) return { crashes: 0, fatalities: 0 };
  return q.pool.countInside(q.request.wkt, q.request.radius, points);
}

/**
 * The 0-100 road risk index of the area (its exact outline's crashes and area, docs/risk-index.md),
 * and the cells' figures: per-cell indices, distribution and riskiest cells. Under a filter the counts,
 * their rates and the cells with crashes are of the crashes it matches; the indices (the area's, its
 * rate and smoothed rate, the cells') stay those of every crash: a filtered index would need its own reference.
 */
export async function riskInfo(q: AreaQuery) {
  const cells = await q.crashCells();
  const touched = q.cells.length;
  if (!touched || q.resolution === null) return outside();
  // The filtered cells first: they bound a filter's cost before its crashes are read.
  const filteredCells = await q.filteredCells();
  const [model, all, matching, years] = await Promise.all([riskModel(q.em), crashesInside(q, null),
    q.filter ? crashesInside(q, q.filter) : null, q.years()]);
  const inside = matching ?? all;
  const emptyCell = scoreArea(model, 0, getHexagonAreaAvg(q.resolution, 'km2')).index;
  const indices = [...cells.map((c) => c.riskIndex), ...new Array<number>(touched - cells.length).fill(emptyCell)];
  const km2 = q.coverage.coveredKm2;
  const score = scoreArea(model, weightOf(all.crashes, all.fatalities), km2);
  const sources = await q.sources();
  // Ties by cell id, so that equal cells come in one order on every database.
  const riskiest = [...filteredCells].sort((a, b) => b.riskIndex - a.riskIndex || b.fatalities - a.fatalities || (a.cell < b.cell ? -1 : 1)).slice(0, RISKIEST_CELLS);
  return {
    ...common,
    index: score.index,
    modelVersion: model.version,
    areaKm2: round(km2, 3),
    years, firstYear: model.firstYear, lastYear: model.lastYear,
    fatalCrashes: inside.crashes,
    fatalities: inside.fatalities,
    fatalCrashesPerYear: round(inside.crashes / years, 2),
    fatalitiesPerYear: round(inside.fatalities / years, 2),
    fatalCrashesPerKm2Year: km2 > 0 ? sig(inside.crashes / km2 / years) : null,
    fatalitiesPerKm2Year: km2 > 0 ? sig(inside.fatalities / km2 / years) : null,
    rate: sig(score.rate),
    smoothedRate: sig(score.smoothedRate),
    credibility: round(score.credibility, 3),
    priorRate: sig(model.meanRate),
    referenceRate: sig(model.referenceRate),
    meanCellIndex: round(indices.reduce((s, i) => s + i, 0) / touched),
    maxCellIndex: Math.max(...indices),
    cellsWithCrashes: filteredCells.length,
    cellsKm2: round(cellsKm2(q, cells), 3),
    emptyCellIndex: emptyCell,
    distribution: BUCKETS.map((from) => ({
      from, to: from + 20, cells: indices.filter((i) => i >= from && (from === 80 ? i <= 100 : i < from + 20)).length,
    })),
    riskiestCells: riskiest.map((c) => ({ ...cellFigures(c), weightedCrashesPerYear: null, exposureMvkt: null })),
    source: sources.crashes.source,
    sample: sources.crashes.sample,
  };
}

const common = {
  severityWeights: null,
  exposure: 'none: FARS has no traffic volumes and the loaded counting stations are generated samples, so the index is a density, not a rate per vehicle-km',
  method: RISK_METHOD,
};

/** Nothing of the area is covered: no figures. */
const outside = () => ({
  ...common,
  index: null, modelVersion: MODEL_VERSION, areaKm2: 0, years: null, firstYear: null, lastYear: null, fatalCrashes: 0, fatalities: 0,
  fatalCrashesPerYear: null, fatalitiesPerYear: null, fatalCrashesPerKm2Year: null, fatalitiesPerKm2Year: null,
  rate: null, smoothedRate: null, credibility: null, priorRate: null, referenceRate: null,
  meanCellIndex: null, maxCellIndex: null, cellsWithCrashes: 0, cellsKm2: 0, emptyCellIndex: null,
  distribution: BUCKETS.map((from) => ({ from, to: from + 20, cells: 0 })),
  riskiestCells: [], source: null, sample: false,
});
