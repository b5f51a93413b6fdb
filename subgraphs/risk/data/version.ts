import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EntityManager } from '@mikro-orm/core';
import { readRows } from '../services/read.ts';
import { riskDataStatus } from './status.ts';
import { MODEL_VERSION } from './model.ts';

/**
 * What a public Risk Index answer is a function of, besides the request: the loaded data (an id
 * written with every rebuild of the aggregates, in its transaction, stored so that every process on
 * one database agrees), the model version and the risk subgraph's code (a digest of its files).
 * The answer cache and the REST ETag are keyed by it, so a 304 or a cached answer needs no evaluation.
 *
 * Known in memory and read again at most every REFRESH_MS (one primary-key read): a process learns
 * of an ingest made by another one on the same PostgreSQL within that time. A rebuild in this
 * process, and the end of its background load, forget it at once.
 */
export const DATA_VERSION_REFRESH_MS = 5_000;

const UPSERT = `insert into "risk"."risk_data_version" ("id", "version", "loaded_at") values (1, ?, now())`;

/** A new data version (after a rebuild of the aggregates), within the caller's transaction. */
export async function recordDataVersion(em: EntityManager) {
  await em.getConnection().execute(`${UPSERT} on conflict ("id") do update set "version" = excluded."version", "loaded_at" = excluded."loaded_at"`,
    [randomUUID()], 'run', em.getTransactionContext());
  forgetDataVersion(em);
}

/** A version for data loaded before versions were recorded. */
export async function ensureDataVersion(em: EntityManager) {
  await em.getConnection().execute(`${UPSERT} on conflict ("id") do nothing`, [randomUUID()], 'run', em.getTransactionContext());
  forgetDataVersion(em);
}

let codeDigest: string | undefined;
/** The risk subgraph's files (code, schema, shipped data): another build may answer otherwise. */
function riskCodeDigest(): string {
  if (codeDigest) return codeDigest;
  const root = new URL('../', import.meta.url).pathname;
  const hash = createHash('sha256');
  for (const file of readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name)).sort()) {
    hash.update(`${file.slice(root.length)}\0`).update(readFileSync(file));
  }
  return (codeDigest = hash.digest('base64url').slice(0, 16));
}

/** Per database (keyed by the ORM's configuration, shared by its forks). */
const cache = new WeakMap<object, { value: Promise<string | null>; at: number }>();

export const forgetDataVersion = (em: EntityManager) => cache.delete(em.config);

/**
 * The version of the public answers: data, model and code; null while the data are loading (nothing
 * is cached then) or when none is recorded.
 */
export function riskAnswersVersion(em: EntityManager): Promise<string | null> {
  if (riskDataStatus(em) !== 'ready') return Promise.resolve(null);
  const hit = cache.get(em.config);
  if (hit && Date.now() - hit.at < DATA_VERSION_REFRESH_MS) return hit.value;
  const value = readRows<{ version: string }>(em, 'select "version" from "risk"."risk_data_version" where "id" = 1')
    .then(([row]) => (row ? `${row.version}.${MODEL_VERSION}.${riskCodeDigest()}` : null));
  cache.set(em.config, { value, at: Date.now() });
  value.catch(() => cache.delete(em.config));
  return value;
}
