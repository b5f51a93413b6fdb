import { medianRate, SEVERITY_WEIGHT, indexFromRate } from '../data/aggregate.ts';
import { centroid } from '../geometry/cells.ts';
import type { AreaQuery } from './area.ts';

export const RISKIEST_CELLS = 10;
export const RISK_METHOD = 'EPDO-weighted crashes per year (fatal 12, injury 3, PDO 1) per million vehicle-km of exposure, '
  + 'mapped to 0-100 as 100*r/(r+m) with m the median cell rate at the resolution (see docs/risk-index.md)';

const BUCKETS = [0, 20, 40, 60, 80];
const round = (v: number, d = 1) => Math.round(v * 10 ** d) / 10 ** d;

/** The 0-100 road risk index of the area: area index, cell statistics, distribution and riskiest cells. */
export async function riskInfo(q: AreaQuery) {
  const cells = await q.crashCells();
  const touched = q.cells.length;
  // Cells of the area with no crash have index 0 and only background exposure.
  const sumIndex = cells.reduce((s, c) => s + c.riskIndex, 0);
  const distribution = BUCKETS.map((from) => ({
    from, to: from + 20,
    cells: cells.filter((c) => c.riskIndex >= from && (from === 80 ? c.riskIndex <= 100 : c.riskIndex < from + 20)).length,
  }));
  distribution[0].cells += touched - cells.length;
  let index: number | null = null;
  if (touched && q.resolution !== null) {
    const weighted = cells.reduce((s, c) => s + c.weightedPerYear, 0);
    const exposure = cells.reduce((s, c) => s + c.exposureMvkt, 0);
    const median = await medianRate(q.em, q.resolution);
    index = weighted > 0 && exposure > 0 ? indexFromRate(weighted / exposure, median) : 0;
  }
  const riskiest = [...cells].sort((a, b) => b.riskIndex - a.riskIndex || b.weightedPerYear - a.weightedPerYear).slice(0, RISKIEST_CELLS);
  return {
    index,
    meanCellIndex: touched ? round(sumIndex / touched) : null,
    maxCellIndex: touched ? (cells.length ? Math.max(...cells.map((c) => c.riskIndex)) : 0) : null,
    cellsWithCrashes: cells.length,
    distribution,
    riskiestCells: riskiest.map((c) => ({
      cell: c.cell, resolution: c.resolution, riskIndex: c.riskIndex, ...centroid(c.cell),
      fatal: c.fatal, injury: c.injury, propertyDamageOnly: c.pdo,
      weightedCrashesPerYear: c.weightedPerYear, exposureMvkt: c.exposureMvkt,
    })),
    severityWeights: { fatal: SEVERITY_WEIGHT.fatal, injury: SEVERITY_WEIGHT.injury, propertyDamageOnly: SEVERITY_WEIGHT.pdo },
    method: RISK_METHOD,
    sample: touched ? await q.sample('crashes') : false,
  };
}
