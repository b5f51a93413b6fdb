import type { FastifyBaseLogger } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { Config } from '../../platform/config.ts';
import { AppError } from '../../platform/errors.ts';
import { riskAreaKey as outlineKey } from '../area-key.ts';
import { WorkerPool } from '../../platform/worker-pool.ts';
import type { ExportInput } from '../export/render.ts';
import type { MapFormat, MapInput } from '../map/render.ts';
import type { AreaTask, AreaTaskResult, ExportTask, ExportTaskResult, InsideTask, InsideTaskResult, MapTask, MapTaskResult, ResolvedArea } from './area-task.ts';
import { tooComplex, type GeometryBudget } from './budget.ts';
import type { CrashPoints, InsideCount } from './inside.ts';
import type { Resolution } from '../entities.ts';

export interface AreaPool {
  /** The resolved area, from the cache of recent areas or the workers. Shared with other requests: read only. */
  resolve(wkt: string, radius: number | null | undefined, maxCells: number, resolution?: Resolution | null): Promise<ResolvedArea>;
  /**
   * The crashes of `points` (the area's cells' crashes) inside the area's exact covered outline, in
   * a worker (which keeps its recent outlines: the area was usually just resolved there).
   */
  countInside(wkt: string, radius: number | null | undefined, points: CrashPoints): Promise<InsideCount>;
  /** The SVG map or the interactive map's GeoJSON layers, drawn in a worker (d3-geo costs 100-200 ms for a county). */
  renderMap(map: MapInput, format?: MapFormat): Promise<string>;
  /** One export page's text (GeoJSON or CSV), written in a worker. */
  renderExport(input: ExportInput): Promise<string>;
  /** Tasks the workers completed, by kind, the threads that drew maps, and the area cache's use (for tests and benchmarks). */
  stats(): { areas: number; maps: number; mapThreads: number[]; cacheHits: number; cachedAreas: number; cachedBytes: number };
  /** Empties the area cache (benchmarks measure cold answers with it). */
  forgetAreas(): void;
  close(): Promise<void>;
}

/**
 * Recently resolved areas, so that the several calls an analyst makes for one area (each data set,
 * the map) parse, clip and cover it once. A resolved area is a pure function of the request and of
 * fixed inputs (the boundaries, the budget), so a cached one is the same answer. Bounded in entries
 * and in (estimated) bytes: a whole state holds about 1,700 cells, some 100 KB.
 */
export const AREA_CACHE_ENTRIES = 256;
export const AREA_CACHE_BYTES = 16 * 1024 * 1024;
const areaBytes = (area: ResolvedArea) => 1024 + area.cells.length * 64;

/** The resolution asked is part of it: an area's cells at 9 are not its automatic ones. */
const areaKey = (outline: string, maxCells: number, resolution: Resolution | null) => `${maxCells}|${resolution ?? 'auto'}|${outline}`;

/** The Risk Index's workers (parse, validate, buffer, clip, cell cover; map drawing; export pages), bounded by RISK_*. */
export function createAreaPool(config: Config, log: FastifyBaseLogger): AreaPool {
  const budget: GeometryBudget = {
    vertices: config.RISK_MAX_VERTICES, areaKm2: config.RISK_MAX_AREA_KM2,
    cells: config.RISK_MAX_CELLS, bufferedVertices: config.RISK_MAX_BUFFERED_VERTICES, pointTests: config.RISK_MAX_POINT_TESTS,
  };
  const pool = new WorkerPool<AreaTask | InsideTask | MapTask | ExportTask, AreaTaskResult | InsideTaskResult | MapTaskResult | ExportTaskResult>({
    name: 'Risk Index geometry', filename: new URL('./area-task.ts', import.meta.url),
    threads: config.RISK_WORKERS, taskTimeoutMs: config.RISK_TASK_TIMEOUT_MS, maxQueue: config.RISK_QUEUE_MAX,
    maxHeapMb: config.RISK_WORKER_HEAP_MB, overLimit: tooComplex,
    onWorkerError: (error) => log.warn({ err: { type: error.name, message: error.message } }, 'a Risk Index geometry worker failed and was replaced'),
  });
  const stats = { areas: 0, maps: 0, mapThreads: new Set<number>(), cacheHits: 0 };
  const cache = new LRUCache<string, ResolvedArea>({ max: AREA_CACHE_ENTRIES, maxSize: AREA_CACHE_BYTES, sizeCalculation: areaBytes });
  return {
    async resolve(wkt, radius, maxCells, resolution = null) {
      const outline = outlineKey(wkt, radius);
      const key = areaKey(outline, maxCells, resolution);
      const cached = cache.get(key);
      if (cached) {
        stats.cacheHits += 1;
        return cached;
      }
      const result = await pool.run({ kind: 'area', key: outline, wkt, radius, budget, maxCells, resolution }) as AreaTaskResult;
      stats.areas += 1;
      // Refusals are not kept: they are cheap (checked before the work) or bounded by the time limit.
      if (!result.ok) throw new AppError(result.code, result.message, result.extensions);
      cache.set(key, result.area);
      return result.area;
    },
    async countInside(wkt, radius, points) {
      const result = await pool.run({ kind: 'inside', key: outlineKey(wkt, radius), wkt, radius, budget, points }) as InsideTaskResult;
      if (!result.ok) throw new AppError(result.code, result.message, result.extensions);
      return result.inside;
    },
    async renderMap(map, format = 'svg') {
      const result = await pool.run({ kind: 'map', budget, map, format }) as MapTaskResult;
      stats.maps += 1;
      if (!result.ok) throw new AppError(result.code, result.message, result.extensions);
      stats.mapThreads.add(result.threadId);
      return result.text;
    },
    async renderExport(input) {
      const result = await pool.run({ kind: 'export', export: input }) as ExportTaskResult;
      if (!result.ok) throw new AppError(result.code, result.message, result.extensions);
      return result.text;
    },
    stats: () => ({
      areas: stats.areas, maps: stats.maps, mapThreads: [...stats.mapThreads],
      cacheHits: stats.cacheHits, cachedAreas: cache.size, cachedBytes: cache.calculatedSize,
    }),
    forgetAreas: () => cache.clear(),
    close: () => pool.close(),
  };
}

/** The pool of each database's risk subgraph, found from any EntityManager forked from it (no module-level singleton). */
const pools = new WeakMap<object, AreaPool>();

export const registerAreaPool = (em: { config: object }, pool: AreaPool) => { pools.set(em.config, pool); };

export function areaPoolFor(em: { config: object }): AreaPool {
  const pool = pools.get(em.config);
  if (!pool) throw new Error('the Risk Index geometry workers were not started for this database');
  return pool;
}

export async function closeAreaPool(em: { config: object }) {
  await pools.get(em.config)?.close();
  pools.delete(em.config);
}
