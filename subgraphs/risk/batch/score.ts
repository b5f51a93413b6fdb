import type { EntityManager } from '@mikro-orm/core';
import { AppError } from '../../platform/errors.ts';
import { MAX_CELLS } from '../geometry/cells.ts';
import type { AreaPool } from '../geometry/pool.ts';
import { resolveArea } from '../services/area.ts';
import { riskInfo } from '../services/risk-info.ts';

/** A row's figures, or why it has none. */
export interface RowScore {
  riskIndex: number | null;
  crashes: number | null;
  fatalities: number | null;
  areaKm2: number | null;
  error: string | null;
}

const MAX_ERROR = 500;

/** A row without figures, and why. */
export const unscored = (error: string): RowScore =>
  ({ riskIndex: null, crashes: null, fatalities: null, areaKm2: null, error: error.slice(0, MAX_ERROR) });

/**
 * One row, as `riskIndex { riskInfo }` of a request scores it (the same validation and geometry
 * budget, the same index), in the batch's own geometry workers. A refusal (400, 422) is the row's error.
 */
export async function scoreRow(em: EntityManager, pool: AreaPool, wkt: string, radius: number | null) {
  try {
    const info = await riskInfo(await resolveArea(em, wkt, radius, null, null, null, MAX_CELLS, pool));
    const { index: riskIndex, fatalCrashes: crashes, fatalities, areaKm2 } = info;
    const score: RowScore = { riskIndex, crashes, fatalities, areaKm2, error: null };
    return score;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const limit = error.extensions.limit ? ` (limit: ${String(error.extensions.limit)})` : '';
    return unscored(`${error.code}: ${error.message}${limit}`);
  }
}
