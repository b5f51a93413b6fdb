import { centroid } from '../geometry/cells.ts';
import type { CrashCell } from '../entities.ts';

const round = (v: number, d: number) => Math.round(v * 10 ** d) / 10 ** d;
/** Rates are small numbers: four significant digits. */
export const sig = (v: number) => (v === 0 ? 0 : Number(v.toPrecision(4)));

export type CellFigureRow = Pick<CrashCell, 'cell' | 'resolution' | 'riskIndex' | 'fatal' | 'injury' | 'pdo' | 'fatalities' | 'areaKm2' | 'fatalRate' | 'fatalityRate'>;

/** One H3 cell's figures as the report and the cell exports state them. */
export const cellFigures = (c: CellFigureRow) => ({
  cell: c.cell, resolution: c.resolution, riskIndex: c.riskIndex, ...centroid(c.cell),
  fatal: c.fatal, injury: c.injury, propertyDamageOnly: c.pdo, fatalities: c.fatalities, areaKm2: round(c.areaKm2, 4),
  fatalCrashesPerKm2Year: sig(c.fatalRate), fatalitiesPerKm2Year: sig(c.fatalityRate),
});
export type CellFigures = ReturnType<typeof cellFigures>;
