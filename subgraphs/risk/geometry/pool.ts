import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../platform/config.ts';
import { AppError } from '../../platform/errors.ts';
import { WorkerPool } from '../../platform/worker-pool.ts';
import type { AreaTask, AreaTaskResult, ResolvedArea } from './area-task.ts';
import { tooComplex, type GeometryBudget } from './budget.ts';

export interface AreaPool {
  resolve(wkt: string, radius: number | null | undefined, maxCells: number): Promise<ResolvedArea>;
  close(): Promise<void>;
}

/** The Risk Index's geometry workers (parse, validate, buffer, clip, cell cover), bounded by RISK_*. */
export function createAreaPool(config: Config, log: FastifyBaseLogger): AreaPool {
  const budget: GeometryBudget = {
    vertices: config.RISK_MAX_VERTICES, areaKm2: config.RISK_MAX_AREA_KM2,
    cells: config.RISK_MAX_CELLS, bufferedVertices: config.RISK_MAX_BUFFERED_VERTICES,
  };
  const pool = new WorkerPool<AreaTask, AreaTaskResult>({
    name: 'Risk Index geometry', filename: new URL('./area-task.ts', import.meta.url),
    threads: config.RISK_WORKERS, taskTimeoutMs: config.RISK_TASK_TIMEOUT_MS, maxQueue: config.RISK_QUEUE_MAX,
    maxHeapMb: config.RISK_WORKER_HEAP_MB, overLimit: tooComplex,
    onWorkerError: (error) => log.warn({ err: { type: error.name, message: error.message } }, 'a Risk Index geometry worker failed and was replaced'),
  });
  return {
    async resolve(wkt, radius, maxCells) {
      const result = await pool.run({ wkt, radius, budget, maxCells });
      if (!result.ok) throw new AppError(result.code, result.message, result.extensions);
      return result.area;
    },
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
