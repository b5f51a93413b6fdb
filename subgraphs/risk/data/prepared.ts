import { createHash } from 'node:crypto';
import { access, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { EntityManager } from '@mikro-orm/core';
import type { PgliteConnection } from '@mikro-orm/pglite';
import { TEMPLATE_DIR } from '../../platform/db/cluster-template.ts';
import { createFileAtomically } from '../../platform/fs/atomic-file.ts';
import type { Cluster } from '../../platform/db/pglite-thread.ts';

/**
 * The Risk Index data of a first start, prepared at install time: on the embedded database a new
 * DATA_DIR gets the shipped crashes, the sample counting stations and the aggregates copied in
 * before the service answers, instead of loading them in the background for seconds. The file
 * holds each risk table as PostgreSQL COPY text, made by a full load (ensureRiskData) into an
 * in-memory cluster, and is named by a digest of what the data are made from (the FARS files, the
 * load and geometry code, the migrations): anything else is ignored and made again by `npm install`.
 */
const RISK_DIR = new URL('../', import.meta.url).pathname;
const INPUTS = ['data', 'data/fars', 'geometry', 'migrations'];

interface PreparedTable { name: string; columns: string[]; copy: string }

/** The digest of the files the prepared data are made from. */
async function inputsDigest(): Promise<string> {
  const hash = createHash('sha256');
  for (const folder of INPUTS) {
    const names = (await readdir(join(RISK_DIR, folder), { withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name).sort();
    for (const name of names) hash.update(`${folder}/${name}\0`).update(await readFile(join(RISK_DIR, folder, name)));
  }
  hash.update(await readFile(join(RISK_DIR, 'entities.ts')));
  return hash.digest('hex').slice(0, 16);
}

export const preparedRiskDataFile = async (folder = TEMPLATE_DIR) => join(folder, `risk-data-${await inputsDigest()}.json`);

/** True when prepared data for these inputs are at hand. */
export const preparedRiskDataReady = async (folder = TEMPLATE_DIR) => access(await preparedRiskDataFile(folder)).then(() => true, () => false);

const nativeClient = async (em: EntityManager) => await (em.getConnection() as unknown as PgliteConnection).getNativeClient() as Cluster;

/** The risk tables holding rows (the migration history aside), with their columns in order. */
async function riskTables(pglite: Cluster): Promise<{ name: string; columns: string[] }[]> {
  const { rows } = await pglite.query<{ name: string; columns: string[] }>(
    `select table_name as name, array_agg(column_name::text order by ordinal_position) as columns from information_schema.columns
     where table_schema = 'risk' and table_name <> 'mikro_orm_migrations' group by table_name order by table_name`);
  return rows;
}

const columnList = (columns: string[]) => columns.map((c) => `"${c}"`).join(', ');

/** Copies every risk table of a loaded database out, as the prepared file's content. */
export async function dumpRiskData(em: EntityManager): Promise<string> {
  const pglite = await nativeClient(em);
  const tables: PreparedTable[] = [];
  for (const { name, columns } of await riskTables(pglite)) {
    const result = await pglite.query(`copy "risk"."${name}" (${columnList(columns)}) to '/dev/blob'`);
    // An empty table writes nothing, and PGlite hands back no blob.
    tables.push({ name, columns, copy: (await result.blob?.text()) ?? '' });
  }
  return JSON.stringify({ tables });
}

/** Writes the prepared file (when missing) with `make`, and removes those of other inputs. */
export async function writePreparedRiskData(make: () => Promise<string>, folder = TEMPLATE_DIR): Promise<string> {
  const file = await preparedRiskDataFile(folder);
  if (!await preparedRiskDataReady(folder)) await createFileAtomically(file, await make(), 0o644);
  const stale = (await readdir(folder)).filter((name) => /^risk-data-[0-9a-f]+\.json$/.test(name) && join(folder, name) !== file);
  await Promise.all(stale.map((name) => rm(join(folder, name), { force: true })));
  return file;
}

/**
 * Copies the prepared data into an empty PGlite risk schema, in one transaction. False (nothing
 * done) when there is no prepared file for these inputs or it does not fit the tables.
 */
export async function restorePreparedRiskData(em: EntityManager, folder = TEMPLATE_DIR): Promise<boolean> {
  const text = await readFile(await preparedRiskDataFile(folder), 'utf8').catch(() => undefined);
  if (!text) return false;
  const { tables } = JSON.parse(text) as { tables: PreparedTable[] };
  const pglite = await nativeClient(em);
  const current = new Map((await riskTables(pglite)).map((t) => [t.name, t.columns.join(',')]));
  if (tables.some((t) => current.get(t.name) !== t.columns.join(','))) return false;
  await pglite.transaction(async (tx) => {
    for (const t of tables.filter((table) => table.copy)) {
      await tx.query(`copy "risk"."${t.name}" (${columnList(t.columns)}) from '/dev/blob'`, [], { blob: new Blob([t.copy]) });
    }
  });
  return true;
}
