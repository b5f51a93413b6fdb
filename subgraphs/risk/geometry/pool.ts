import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../platform/config.ts';
import { AppError } from '../../platform/errors.ts';
import { WorkerPool } from '../../platform/worker-pool.ts';
import type { MapInput } from '../map/render.ts';
import type { AreaTask, AreaTaskResult, MapTask, MapTaskResult, ResolvedArea } from './area-task.ts';
import { tooComplex, type GeometryBudget } from './budget.ts';

export interface AreaPool {
  resolve(wkt: string, radius: number | null | undefined, maxCells: number): Promise<ResolvedArea>;
  /** The SVG map, drawn in a worker (d3-geo costs 100-200 ms for a county). */
  renderMap(map: MapInput): Promise<string>;
  /** Tasks the workers completed, by kind, and the threads that drew maps (for tests and metrics). */
  stats(): { areas: number; maps: number; mapThreads: number[] };
  close(): Promise<void>;
}

/** The Risk Index's workers (parse, validate, buffer, clip, cell cover; map drawing), bounded by RISK_*. */
export function createAreaPool(config: Config, log: FastifyBaseLogger): AreaPool {
  const budget: GeometryBudget = {
    vertices: config.RISK_MAX_VERTICES, areaKm2: config.RISK_MAX_AREA_KM2,
    cells: config.RISK_MAX_CELLS, bufferedVertices: config.RISK_MAX_BUFFERED_VERTICES,
  };
  const pool = new WorkerPool<AreaTask | MapTask, AreaTaskResult | MapTaskResult>({
    name: 'Risk Index geometry', filename: new URL('./area-task.ts', import.meta.url),
    threads: config.RISK_WORKERS, taskTimeoutMs: config.RISK_TASK_TIMEOUT_MS, maxQueue: config.RISK_QUEUE_MAX,
    maxHeapMb: config.RISK_WORKER_HEAP_MB, overLimit: tooComplex,
    onWorkerError: (error) => log.warn({ err: { type: error.name, message: error.message } }, 'a Risk Index geometry worker failed and was replaced'),
  });
  const stats = { areas: 0, maps: 0, mapThreads: new Set<number>() };
  return {
    async resolve(wkt, radius, maxCells) {
      const result = await pool.run({ kind: 'area', wkt, radius, budget, maxCells }) as AreaTaskResult;
      stats.areas += 1;
      if (!result.ok) throw new AppError(result.code, result.message, result.extensions);
      return result.area;
    },
    async renderMap(map) {
      const result = await pool.run({ kind: 'map', budget, map }) as MapTaskResult;
      stats.maps += 1;
      if (!result.ok) throw new AppError(result.code, result.message, result.extensions);
      stats.mapThreads.add(result.threadId);
      return result.svg;
    },
    stats: () => ({ areas: stats.areas, maps: stats.maps, mapThreads: [...stats.mapThreads] }),
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
