import { threadId } from 'node:worker_threads';
import { AppError, type ErrorCode } from '../../platform/errors.ts';
import { workerTask } from '../../platform/worker-task.ts';
import type { Resolution } from '../entities.ts';
import { mapLayers } from '../map/layers.ts';
import { renderMapSvg, type MapFormat, type MapInput } from '../map/render.ts';
import type { GeometryBudget } from './budget.ts';
import { selectCells } from './cells.ts';
import { clipToCoverage, type Coverage, type CoveredState } from './coverage.ts';
import { searchArea } from './wkt.ts';

export interface AreaTask {
  kind: 'area';
  wkt: string;
  radius: number | null | undefined;
  budget: GeometryBudget;
  maxCells: number;
}

export interface MapTask {
  kind: 'map';
  budget: GeometryBudget;
  map: MapInput;
  format: MapFormat;
}

/**
 * What the event loop needs of a resolved area: no geometry crosses back (the map is drawn in the
 * workers too), only the figures the report states and the cells.
 */
export interface ResolvedArea {
  search: { geometryType: string; radius: number | null };
  coverage: Omit<Coverage, 'parts'> & { parts: { state: CoveredState; areaKm2: number }[] };
  /** Null when nothing of the area is covered. */
  resolution: Resolution | null;
  cells: string[];
}

/** A refusal crosses the thread boundary as data (an Error loses its code there). */
type Refusal = { ok: false; code: ErrorCode; message: string; extensions: Record<string, unknown> };
export type AreaTaskResult = { ok: true; area: ResolvedArea } | Refusal;
/** `threadId` says which thread drew the map (0 would be the main thread). */
export type MapTaskResult = { ok: true; text: string; threadId: number } | Refusal;

/** Parse and validate the WKT, check the budget, buffer, clip to coverage, pick the H3 cells. */
function resolveArea(task: AreaTask): ResolvedArea {
  const search = searchArea(task.wkt, task.radius, task.budget);
  const coverage = clipToCoverage(search.area);
  const selection = coverage.parts.length ? selectCells(coverage.parts.map((p) => p.area), coverage.coveredKm2, task.maxCells) : null;
  return {
    search: { geometryType: search.geometry.type, radius: search.radius },
    coverage: { ...coverage, parts: coverage.parts.map((p) => ({ state: p.state, areaKm2: p.areaKm2 })) },
    resolution: selection?.resolution ?? null,
    cells: selection?.cells ?? [],
  };
}

/** Runs in a worker thread: an area task or a map task; a refusal (400, 422) is returned, not thrown. */
function runTask(task: AreaTask | MapTask): AreaTaskResult | MapTaskResult {
  try {
    if (task.kind === 'map') return { ok: true, text: task.format === 'svg' ? renderMapSvg(task.map, task.budget) : mapLayers(task.map, task.budget), threadId };
    return { ok: true, area: resolveArea(task) };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const { code: _code, ...extensions } = error.extensions;
    return { ok: false, code: error.code, message: error.message, extensions };
  }
}

export default workerTask(runTask);
