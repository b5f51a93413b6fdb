/**
 * The worker thread that holds the shared PGlite cluster (see pglite-thread.ts): it opens the
 * cluster and runs each statement it is sent, so PostgreSQL's WebAssembly and the parsing of its
 * rows never hold the service's event loop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { btree_gist } from '@electric-sql/pglite/contrib/btree_gist';
import pg from 'pg';
import { clusterTemplate } from './cluster-template.ts';
import { collectThisThread } from '../start-up-memory.ts';
import type { ClusterSpec, HostReply, HostRequest } from './pglite-thread.ts';

const TEXT_ARRAY_OID = 1009;

/**
 * MikroORM's parsers for the instances it creates (createPostgreSqlTypeParsers of @mikro-orm/sql,
 * which it converts from): dates, timestamps and intervals stay text, their arrays are arrays of
 * text. Written out rather than imported: importing @mikro-orm/sql would load the whole ORM into
 * this thread's heap.
 */
function ormParsers() {
  const textArray = pg.types.getTypeParser(TEXT_ARRAY_OID as never, 'text') as (value: string) => string[];
  const parsers: Record<number, (value: string) => unknown> = {};
  for (const oid of [1082, 1114, 1184, 1186]) parsers[oid] = (value) => value;
  for (const oid of [1182, 1115, 1185, 1187]) parsers[oid] = textArray;
  return parsers;
}

/** Opens the cluster, a new one (no PG_VERSION yet) loaded from the prepared template rather than made by initdb. */
async function openCluster({ dataDir, sharedBuffersMb }: ClusterSpec) {
  const fresh = dataDir === 'memory://' || !existsSync(join(dataDir, 'PG_VERSION'));
  const parsers = ormParsers();
  // The only prepared statements are db/read-statement.ts's fixed keyed reads. PostgreSQL would plan
  // the `= any($n)` lookups again on every EXECUTE (the generic plan's estimate of 10 rows loses to
  // the custom plan's 1), ~20-40 us of WebAssembly each time, for the same index scan.
  const startParams = [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffersMb}MB`, '-c', 'plan_cache_mode=force_generic_plan'];
  return PGlite.create({ dataDir, extensions: { btree_gist }, parsers, startParams, loadDataDir: fresh ? await clusterTemplate() : undefined });
}

const port = parentPort!;
const pglite = await openCluster(workerData as ClusterSpec);

interface Open { tx: Transaction; end: (commit: boolean) => void; done: Promise<void> }

/**
 * Transactions by id, from their BEGIN's arrival: each holds PGlite's transaction lock, once it has
 * it, until the caller ends it. Their statements come without waiting for the BEGIN's answer and
 * wait here for the transaction to open.
 */
const open = new Map<number, Promise<Open>>();

function begin(id: number): Promise<number> {
  const opening = new Promise<Open>((begun, failed) => {
    let end!: (commit: boolean) => void;
    const ended = new Promise<boolean>((resolve) => { end = resolve; });
    const done = pglite.transaction(async (tx) => {
      begun({ tx, end, done });
      if (!await ended) await tx.rollback();
    });
    done.catch(failed);
  });
  open.set(id, opening);
  return opening.then(() => id, (error: unknown) => {
    open.delete(id);
    throw error;
  });
}

function opened(id: number) {
  const transaction = open.get(id);
  if (!transaction) throw new Error(`no open transaction ${id}`);
  return transaction;
}

async function finish(id: number, commit: boolean) {
  const transaction = await opened(id);
  open.delete(id);
  transaction.end(commit);
  await transaction.done;
}

/**
 * Runs `statement` in the request's transaction once it is open, else on the cluster at once, in the
 * order sent: a statement sent before a BEGIN runs before that transaction takes the lock.
 */
type On = Pick<Transaction, 'query' | 'exec'>;
function on<T>(tx: number | undefined, statement: (target: On) => Promise<T>): Promise<T> {
  return tx === undefined ? statement(pglite) : opened(tx).then((open) => statement(open.tx));
}

async function run(request: HostRequest): Promise<unknown> {
  switch (request.op) {
    case 'query': {
      const options = { rowMode: request.rowMode, blob: request.blob };
      const { rows, affectedRows, fields, blob } = await on(request.tx, (s) => s.query(request.sql, request.params, options));
      return { rows, affectedRows, fields, blob };
    }
    case 'exec': {
      const results = await on(request.tx, (s) => s.exec(request.sql));
      return results.map(({ rows, affectedRows, fields }) => ({ rows, affectedRows, fields }));
    }
    case 'begin': return begin(request.id);
    case 'end': return finish(request.tx, request.commit);
    case 'close': return pglite.close();
    // Its start-up (opening, migrations, a first start's data) leaves what an idle service would keep.
    case 'collect': return collectThisThread();
  }
}

/** A database error's fields (code, detail, constraint...), which structured cloning of an Error drops. */
function plainError(error: unknown) {
  if (!(error instanceof Error)) return { message: String(error) };
  const { queryOptions: _, ...fields } = error as Error & Record<string, unknown>;
  return { ...fields, name: error.name, message: error.message, stack: error.stack };
}

port.on('message', (request: HostRequest) => {
  run(request).then(
    (result) => port.postMessage({ id: request.id, result } satisfies HostReply),
    (error: unknown) => port.postMessage({ id: request.id, error: plainError(error) } satisfies HostReply),
  );
});
port.postMessage({ id: 0, result: 'ready' } satisfies HostReply);
