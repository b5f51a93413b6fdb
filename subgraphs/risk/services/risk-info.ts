import { indexFromRate, indexRate, referenceRate } from '../data/aggregate.ts';
import { getHexagonAreaAvg } from 'h3-js';
import type { CrashCell } from '../entities.ts';
import type { AreaQuery } from './area.ts';
import { cellFigures, sig } from './cell-figures.ts';

export const RISKIEST_CELLS = 10;
export const RISK_METHOD = 'Fatal crashes and fatalities per km² per year (their mean is the rate r) over the H3 cells of the area, '
  + 'mapped to 0-100 as 100*R/(R+1) with R = r / the median rate of the cells with a fatal crash at the resolution. '
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

/** The 0-100 road risk index of the area: area index, rates, cell statistics, distribution and riskiest cells. */
export async function riskInfo(q: AreaQuery) {
  const cells = await q.crashCells();
  const touched = q.cells.length;
  const sources = touched ? await q.sources() : null;
  const years = sources?.crashes.firstYear != null ? sources.crashes.lastYear! - sources.crashes.firstYear + 1 : 1;
  // Cells of the area with no crash have index 0.
  const sumIndex = cells.reduce((s, c) => s + c.riskIndex, 0);
  const distribution = BUCKETS.map((from) => ({
    from, to: from + 20,
    cells: cells.filter((c) => c.riskIndex >= from && (from === 80 ? c.riskIndex <= 100 : c.riskIndex < from + 20)).length,
  }));
  distribution[0].cells += touched - cells.length;
  const fatal = cells.reduce((s, c) => s + c.fatal, 0);
  const fatalities = cells.reduce((s, c) => s + c.fatalities, 0);
  const km2 = cellsKm2(q, cells);
  let index: number | null = null;
  let reference: number | null = null;
  if (touched && q.resolution !== null) {
    reference = await referenceRate(q.em, q.resolution);
    index = indexFromRate(indexRate(fatal, fatalities, km2, years), reference);
  }
  const riskiest = [...cells].sort((a, b) => b.riskIndex - a.riskIndex || b.fatalities - a.fatalities).slice(0, RISKIEST_CELLS);
  return {
    index,
    meanCellIndex: touched ? round(sumIndex / touched) : null,
    maxCellIndex: touched ? (cells.length ? Math.max(...cells.map((c) => c.riskIndex)) : 0) : null,
    cellsWithCrashes: cells.length,
    cellsKm2: round(km2, 3),
    years: touched ? years : null,
    fatalCrashes: fatal,
    fatalities,
    fatalCrashesPerYear: touched ? round(fatal / years, 2) : null,
    fatalitiesPerYear: touched ? round(fatalities / years, 2) : null,
    fatalCrashesPerKm2Year: touched && km2 > 0 ? sig(fatal / km2 / years) : null,
    fatalitiesPerKm2Year: touched && km2 > 0 ? sig(fatalities / km2 / years) : null,
    referenceRate: reference === null ? null : sig(reference),
    distribution,
    riskiestCells: riskiest.map((c) => ({ ...cellFigures(c), weightedCrashesPerYear: null, exposureMvkt: null })),
    severityWeights: null,
    exposure: 'none: FARS has no traffic volumes and the loaded counting stations are generated samples, so the index is a density, not a rate per vehicle-km',
    method: RISK_METHOD,
    source: sources?.crashes.source ?? null,
    sample: sources?.crashes.sample ?? false,
  };
}
