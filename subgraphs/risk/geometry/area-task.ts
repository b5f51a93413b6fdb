import { AppError, type ErrorCode } from '../../platform/errors.ts';
import { workerTask } from '../../platform/worker-task.ts';
import type { Resolution } from '../entities.ts';
import type { GeometryBudget } from './budget.ts';
import { selectCells } from './cells.ts';
import { clipToCoverage, type Coverage } from './coverage.ts';
import { searchArea, type SearchArea } from './wkt.ts';

export interface AreaTask {
  wkt: string;
  radius: number | null | undefined;
  budget: GeometryBudget;
  maxCells: number;
}

export interface ResolvedArea {
  search: SearchArea;
  coverage: Coverage;
  /** Null when nothing of the area is covered. */
  resolution: Resolution | null;
  cells: string[];
}

/** A refusal crosses the thread boundary as data (an Error loses its code there). */
export type AreaTaskResult =
  | { ok: true; area: ResolvedArea }
  | { ok: false; code: ErrorCode; message: string; extensions: Record<string, unknown> };

/** Runs in a worker thread: parse and validate the WKT, check the budget, buffer, clip to coverage, pick the H3 cells. */
function resolveAreaTask(task: AreaTask): AreaTaskResult {
  try {
    const search = searchArea(task.wkt, task.radius, task.budget);
    const coverage = clipToCoverage(search.area);
    const selection = coverage.parts.length ? selectCells(coverage.parts.map((p) => p.area), coverage.coveredKm2, task.maxCells) : null;
    return { ok: true, area: { search, coverage, resolution: selection?.resolution ?? null, cells: selection?.cells ?? [] } };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const { code: _code, ...extensions } = error.extensions;
    return { ok: false, code: error.code, message: error.message, extensions };
  }
}

export default workerTask(resolveAreaTask);
