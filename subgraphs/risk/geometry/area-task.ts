import { threadId } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import { AppError, type ErrorCode } from '../../platform/errors.ts';
import { workerTask } from '../../platform/worker-task.ts';
import type { Resolution } from '../entities.ts';
import { renderExport, type ExportInput } from '../export/render.ts';
import { mapLayers } from '../map/layers.ts';
import { renderMapSvg, type MapFormat, type MapInput } from '../map/render.ts';
import { vertexCount, type GeometryBudget } from './budget.ts';
import { selectCells } from './cells.ts';
import { clipToCoverage, type Coverage, type CoveredState } from './coverage.ts';
import { countInside, type CrashPoints, type InsideCount } from './inside.ts';
import { searchArea, type SearchArea } from './wkt.ts';

export interface AreaTask {
  kind: 'area';
  /** The area's WKT (normalised) and radius, hashed: the key of this thread's recent outlines. */
  key: string;
  wkt: string;
  radius: number | null | undefined;
  budget: GeometryBudget;
  maxCells: number;
  /** The H3 resolution asked, or null: the finest within maxCells (cells.ts selectCells). */
  resolution: Resolution | null;
}

/** Counts the crashes of the area's cells that lie inside its exact covered outline. */
export interface InsideTask extends Omit<AreaTask, 'kind' | 'maxCells' | 'resolution'> {
  kind: 'inside';
  points: CrashPoints;
}

export interface MapTask {
  kind: 'map';
  budget: GeometryBudget;
  map: MapInput;
  format: MapFormat;
}

export interface ExportTask {
  kind: 'export';
  export: ExportInput;
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
export type InsideTaskResult = { ok: true; inside: InsideCount } | Refusal;
export type ExportTaskResult = { ok: true; text: string } | Refusal;

type CoveredArea = { search: SearchArea; coverage: Coverage };
const outlineVertices = ({ search, coverage }: CoveredArea) =>
  [search.area, ...coverage.parts.map((p) => p.area)].reduce((n, f) => n + vertexCount(f.geometry), 1);

/**
 * This thread's recent covered areas, so the crash count of an area it has just resolved does not
 * buffer and clip it again. Few, and bounded in vertices: a buffered outline can hold 200,000.
 */
const recent = new LRUCache<string, CoveredArea>({ max: 8, maxSize: 1_000_000, sizeCalculation: outlineVertices });

/** Parse and validate the WKT, check the budget, buffer, clip to coverage. */
function coveredArea(task: AreaTask | InsideTask) {
  let area = recent.get(task.key);
  if (!area) {
    const search = searchArea(task.wkt, task.radius, task.budget);
    recent.set(task.key, area = { search, coverage: clipToCoverage(search.area) });
  }
  return area;
}

/** The covered area, then its H3 cells. */
function resolveArea(task: AreaTask): ResolvedArea {
  const { search, coverage } = coveredArea(task);
  const selection = coverage.parts.length ? selectCells(coverage.parts.map((p) => p.area), coverage.coveredKm2, task.maxCells, task.resolution, task.budget.cells)
    : null;
  return {
    search: { geometryType: search.geometry.type, radius: search.radius },
    coverage: { ...coverage, parts: coverage.parts.map((p) => ({ state: p.state, areaKm2: p.areaKm2 })) },
    resolution: selection?.resolution ?? null,
    cells: selection?.cells ?? [],
  };
}

/** Runs in a worker thread: an area, inside, map or export task; a refusal (400, 422) is returned, not thrown. */
function runTask(task: AreaTask | InsideTask | MapTask | ExportTask): AreaTaskResult | InsideTaskResult | MapTaskResult | ExportTaskResult {
  try {
    if (task.kind === 'map') return { ok: true, text: task.format === 'svg' ? renderMapSvg(task.map, task.budget) : mapLayers(task.map, task.budget), threadId };
    if (task.kind === 'inside') return { ok: true, inside: countInside(coveredArea(task).coverage.parts.map((p) => p.area), task.points, task.budget) };
    if (task.kind === 'export') return { ok: true, text: renderExport(task.export) };
    return { ok: true, area: resolveArea(task) };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const { code: _code, ...extensions } = error.extensions;
    return { ok: false, code: error.code, message: error.message, extensions };
  }
}

export default workerTask(runTask);
