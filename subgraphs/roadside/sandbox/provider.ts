import type { Database } from '../../platform/db/orm.ts';
import { holdsRow, inTransaction, runner, type Row, type Run } from '../../platform/db/run.ts';
import { inBackground } from '../../platform/db/statements.ts';
import { TENANT_FILTER, type TenantParams } from '../../platform/db/tenant.ts';
import { AppError } from '../../platform/errors.ts';
import { advisoryLockKey } from '../../platform/events/relay.ts';
import type { Worker, WorkerContext } from '../../platform/subgraph.ts';
import type { RescueStatus } from '../entities.ts';
import { RescueRequestService } from '../services/rescues.ts';

/**
 * The moves of a sandbox rescue after its dispatch, one every SANDBOX_RESCUE_STEP_MS: `progress` is how
 * far along the way from where the provider was dispatched to the disablement it then stands.
 */
export const SANDBOX_MOVES: readonly { status: RescueStatus; progress: number }[] = [
  { status: 'EN_ROUTE', progress: 0.3 },
  { status: 'EN_ROUTE', progress: 0.6 },
  { status: 'APPROACHING', progress: 0.9 },
  { status: 'ARRIVED_ONSITE', progress: 1 },
  { status: 'COMPLETED', progress: 1 },
];
const ARRIVAL = SANDBOX_MOVES.findIndex((move) => move.status === 'ARRIVED_ONSITE');
/** Rescues moved per round. */
const BATCH = 100;
export const SANDBOX_PROVIDER_LOCK = advisoryLockKey('sandbox-provider:roadside');

/** A sandbox rescue whose next move is due (on rescues_sandbox_moving_index); `?`: SANDBOX_RESCUE_STEP_MS ago. */
const DUE = `r.sandbox and r.status in ('BOOKED', 'EN_ROUTE', 'APPROACHING', 'ARRIVED_ONSITE') and r.updated_at <= ?`;
const dueSince = (stepMs: number) => [new Date(Date.now() - stepMs)];

/**
 * Whether any move is due: one statement, outside any transaction. The provider polls in every
 * process, mostly to find nothing; on PostgreSQL each round is a transaction with the lock.
 */
const anyDue = (db: Database, stepMs: number) => holdsRow(runner(db), `"roadside"."rescues" r where ${DUE}`, dueSince(stepMs));

/** The sandbox rescues whose next move is due: their history so far (one entry per move, the dispatch first). */
async function dueRescues(run: Run, stepMs: number): Promise<Row[]> {
  return run(`select r.req_id, r.org_id, r.provider_latitude, r.provider_longitude, r.disablement,
      (select count(*)::int from "roadside"."status_events" e where e.req_id = r.req_id) - 1 as moves
    from "roadside"."rescues" r where ${DUE}
    order by r.updated_at limit ${BATCH}`, dueSince(stepMs));
}

/** Moves one rescue through the service, as its provider would: a real commit, its history entry and its events. */
async function move(db: Database, rescue: Row, stepMs: number): Promise<void> {
  const index = Number(rescue.moves);
  const next = SANDBOX_MOVES[index];
  if (!next) return;
  const spot = (typeof rescue.disablement === 'string' ? JSON.parse(rescue.disablement) : rescue.disablement) as Record<string, number>;
  const done = SANDBOX_MOVES[index - 1]?.progress ?? 0;
  // The rest of the way from where the provider stands, in the share this move covers of what is left.
  const share = done >= 1 ? 1 : (next.progress - done) / (1 - done);
  const at = (from: unknown, to: number) => Number(from) + (to - Number(from)) * share;
  const em = db.orm.em.fork({ clear: true, useContext: false });
  em.setFilterParams(TENANT_FILTER, { orgId: String(rescue.org_id), sandbox: true } satisfies TenantParams);
  await new RescueRequestService(em).updateStatus({
    reqId: String(rescue.req_id), status: next.status,
    latitude: at(rescue.provider_latitude, spot.latitude), longitude: at(rescue.provider_longitude, spot.longitude),
    updatedETA: index < ARRIVAL ? Math.ceil(((ARRIVAL - index) * stepMs) / 60_000) : null,
    note: 'sandbox provider',
  });
}

/** One round: every due move, under the deployment's one lock on PostgreSQL (another process holding it: nothing to do). */
async function round(db: Database, shared: boolean, stepMs: number, log: WorkerContext['log']): Promise<number> {
  const moveAll = async (run: Run) => {
    const due = await dueRescues(run, stepMs);
    for (const rescue of due) {
      // A partner's own update or cancel got there first: the next round sees where it stands.
      await move(db, rescue, stepMs).catch((error: unknown) => {
        if (!(error instanceof AppError)) throw error;
        log.debug({ err: error, reqId: rescue.req_id }, 'sandbox provider: move refused');
      });
    }
    return due.length;
  };
  if (!shared) return moveAll(runner(db));
  return inTransaction(db, async (run) => {
    const [lock] = await run('select pg_try_advisory_xact_lock(?) as ok', [SANDBOX_PROVIDER_LOCK]);
    return lock?.ok ? moveAll(run) : 0;
  });
}

/**
 * The simulated provider of sandbox rescues (docs/sandbox.md): every rescue a sandbox organisation
 * dispatches goes EN_ROUTE, EN_ROUTE again nearer, APPROACHING, ARRIVED_ONSITE and COMPLETED, one move
 * every SANDBOX_RESCUE_STEP_MS, with the provider's position and ETA. It runs in every process that
 * runs the roadside area; on PostgreSQL each round takes an advisory lock, so one process moves the
 * rescues of the whole deployment at a time (PGlite has one owner process).
 */
export function startSandboxProvider({ db, config, log }: WorkerContext): Worker {
  const stepMs = config.SANDBOX_RESCUE_STEP_MS;
  const pollMs = Math.min(1_000, Math.max(25, Math.floor(stepMs / 4)));
  const shared = !!config.DATABASE_URL;
  let stopped = false;
  let failing = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const loop = () => {
    current = inBackground(async () => {
      try {
        if (await anyDue(db, stepMs)) while (!stopped && await round(db, shared, stepMs, log) === BATCH);
        failing = false;
      } catch (error) {
        if (!failing && !stopped) log.warn({ err: error }, 'sandbox provider: a round failed; it tries again');
        failing = true;
      }
    }).finally(() => {
      if (!stopped) timer = setTimeout(loop, pollMs);
    });
  };
  timer = setTimeout(loop, pollMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
  };
}
