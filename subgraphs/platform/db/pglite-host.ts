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

/** Open transactions by id: each holds PGlite's transaction lock until the caller ends it. */
const open = new Map<number, { tx: Transaction; end: (commit: boolean) => void; done: Promise<void> }>();

function begin(id: number): Promise<number> {
  return new Promise((begun, failed) => {
    let end!: (commit: boolean) => void;
    const ended = new Promise<boolean>((resolve) => { end = resolve; });
    const done = pglite.transaction(async (tx) => {
      open.set(id, { tx, end, done });
      begun(id);
      if (!await ended) await tx.rollback();
    });
    done.catch(failed);
  });
}

function opened(id: number) {
  const transaction = open.get(id);
  if (!transaction) throw new Error(`no open transaction ${id}`);
  return transaction;
}

async function finish(id: number, commit: boolean) {
  const transaction = opened(id);
  open.delete(id);
  transaction.end(commit);
  await transaction.done;
}

const on = (tx: number | undefined) => (tx === undefined ? pglite : opened(tx).tx);

async function run(request: HostRequest): Promise<unknown> {
  switch (request.op) {
    case 'query': {
      const { rows, affectedRows, fields, blob } = await on(request.tx).query(request.sql, request.params, { rowMode: request.rowMode, blob: request.blob });
      return { rows, affectedRows, fields, blob };
    }
    case 'exec': return (await on(request.tx).exec(request.sql)).map(({ rows, affectedRows, fields }) => ({ rows, affectedRows, fields }));
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
