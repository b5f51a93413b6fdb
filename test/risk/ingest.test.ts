import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { createGunzip } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { openDatabase, type Database } from '../../subgraphs/platform/db/orm.ts';
import { risk } from '../../subgraphs/risk/index.ts';
import { Crash, CrashCell, TrafficObservation } from '../../subgraphs/risk/entities.ts';
import { rebuildAggregates } from '../../subgraphs/risk/data/aggregate.ts';
import { ingestFars } from '../../subgraphs/risk/data/fars.ts';
import { ensureRiskData, shippedFarsFiles } from '../../subgraphs/risk/data/load.ts';
import { ingestTrafficFeed } from '../../subgraphs/risk/data/traffic-feed.ts';
import { sampleSensors } from '../../subgraphs/risk/data/samples.ts';
import { stateAt } from '../../subgraphs/risk/geometry/coverage.ts';
import { testDatabase } from '../support/database.ts';

const FIXTURE = new URL('./fixtures/accident.csv', import.meta.url).pathname;
let db: Database;
let database: Awaited<ReturnType<typeof testDatabase>>;

beforeAll(async () => {
  database = await testDatabase();
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn', DATABASE_URL: undefined, ...database.env });
  db = await openDatabase(config, { name: risk.name, entities: risk.entities, migrationsPath: risk.migrationsPath });
});
afterAll(async () => { await db?.close(); await database?.drop(); });

describe('FARS accident.csv ingestion', () => {
  it('loads the covered rows of a real-format file, skipping other states and unknown positions', async () => {
    const em = db.orm.em.fork();
    const progress: number[] = [];
    const summary = await ingestFars(em, createReadStream(FIXTURE), (s) => progress.push(s.read));
    expect(summary).toEqual({ read: 6, loaded: 4, skipped: { outsideCoverage: 1, noLocation: 1, invalid: 0 } });
    expect(progress.at(-1)).toBe(6);
    const rows = await em.fork().find(Crash, {}, { orderBy: { caseNumber: 'asc' } });
    expect(rows.map((r) => r.caseNumber)).toEqual([60123, 60125, 170001, 170002]);
    const la = rows[0];
    expect(la).toMatchObject({
      id: 'fars-2022-60123', source: 'fars', state: 6, year: 2022, month: 7, day: 9, hour: 2, minute: 30, severity: 'fatal', fatalities: 2,
      latitude: 34.0522, longitude: -118.2437, weather: 1, weatherName: 'Clear', lightCondition: 2, lightConditionName: 'Dark - Not Lighted',
      functionalSystem: 2, county: 37, city: 1980, persons: 4, vehicles: 2,
    });
    expect(la.hourOfWeek).toBe(5 * 24 + 2); // 2022-07-09 was a Saturday
    const sf = rows[1];
    expect(sf).toMatchObject({ hour: null, minute: null, hourOfWeek: null, weather: 5, weatherName: 'Fog, Smog, Smoke' });
    expect(sf.h3r9).toMatch(/^89/);
  });

  it('re-ingesting the same file updates rather than duplicates', async () => {
    const em = db.orm.em.fork();
    await ingestFars(em, createReadStream(FIXTURE));
    expect(await em.count(Crash, { source: 'fars' })).toBe(4);
  });

  it('refuses a file that is not in the FARS layout, naming the missing columns', async () => {
    const em = db.orm.em.fork();
    await expect(ingestFars(em, Readable.from(['STATE,ST_CASE,YEAR\n6,60001,2022\n']))).rejects.toThrow(/missing column\(s\) MONTH, DAY, HOUR, MINUTE, LATITUDE, LONGITUD, FATALS/);
  });

  it('aggregates the crashes per (resolution, cell)', async () => {
    const em = db.orm.em.fork();
    const built = await rebuildAggregates(em);
    const cells = await em.find(CrashCell, { resolution: 9 });
    expect(cells).toHaveLength(4);
    // The two Chicago crashes share their resolution-5 cell.
    expect(await em.count(CrashCell, { resolution: 5 })).toBe(3);
    expect(built.crashCells).toBe(4 + 4 + 3);
    expect(cells.reduce((s, c) => s + c.fatal, 0)).toBe(4);
    expect(cells.reduce((s, c) => s + c.fatalities, 0)).toBe(5);
    expect(cells.every((c) => c.riskIndex >= 0 && c.riskIndex <= 100)).toBe(true);
  });
});

describe('realtime traffic feed ingestion', () => {
  it('validates the documented JSON format and keeps observations inside coverage', async () => {
    const em = db.orm.em.fork();
    const observedAt = new Date().toISOString();
    const summary = await ingestTrafficFeed(em, { observations: [
      { sensorId: 'il-1', observedAt, latitude: 41.8813, longitude: -87.6745, speedKph: 30, volumeVph: 600 },
      { sensorId: 'nv-1', observedAt, latitude: 36.17, longitude: -115.14, speedKph: 40 },
    ] });
    expect(summary).toEqual({ read: 2, loaded: 1, outsideCoverage: 1 });
    // The same observation again is an update, not a duplicate; a bare array is accepted too.
    await ingestTrafficFeed(em, [{ sensorId: 'il-1', observedAt, latitude: 41.8813, longitude: -87.6745, speedKph: 32 }]);
    const rows = await em.fork().find(TrafficObservation, { sensorId: 'il-1' });
    expect(rows).toHaveLength(1);
    expect(rows[0].speedKph).toBe(32);
    await expect(ingestTrafficFeed(em, { observations: [{ sensorId: 'x', observedAt: 'yesterday', latitude: 41, longitude: -87, speedKph: -1 }] }))
      .rejects.toThrow(/observations\.0\.observedAt[\s\S]*observations\.0\.speedKph/);
  });
});

describe('generated sample', () => {
  it('counting stations are deterministic and lie inside California and Illinois', () => {
    const s = sampleSensors(20);
    expect(s).toEqual(sampleSensors(20));
    expect(s.every((x) => stateAt(x.longitude, x.latitude)?.fips === x.state)).toBe(true);
    expect(s.every((x) => x.volume.length === 168 && x.speed.length === 168)).toBe(true);
  });
});

describe('the shipped FARS data', () => {
  it('a first load cut short (crashes written, no aggregates yet) is completed by the next start', async () => {
    const own = await testDatabase();
    const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn', DATABASE_URL: undefined, ...own.env });
    const opened = await openDatabase(config, { name: risk.name, entities: risk.entities, migrationsPath: risk.migrationsPath });
    try {
      const em = opened.orm.em.fork();
      // What a process stopped during the first load leaves: the first 300 crashes of the first file.
      const [first] = shippedFarsFiles();
      const lines = (await new Promise<string>((resolve, reject) => {
        const chunks: Buffer[] = [];
        createReadStream(first).pipe(createGunzip()).on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks).toString())).on('error', reject);
      })).split('\n');
      await ingestFars(em, Readable.from(lines.slice(0, 301).join('\n')));
      const partial = await em.count(Crash, { source: 'fars' });
      expect(partial).toBeGreaterThan(0);
      expect(partial).toBeLessThan(11_297);
      expect(await em.count(CrashCell, {})).toBe(0);

      await ensureRiskData(em);
      expect(await em.count(Crash, { source: 'fars' })).toBe(11_297);
      const cells = await em.getConnection().execute('select sum(fatal)::int as fatal from "risk"."risk_crash_cells" where resolution = 9');
      expect(cells[0].fatal).toBe(11_297);
    } finally {
      await opened.close();
      await own.drop();
    }
  }, 300_000);
});

describe('the shipped FARS data on a shared PostgreSQL database', () => {
  // Several processes may start at once on one PostgreSQL database; PGlite is one process by design.
  it.runIf(process.env.DATABASE_URL)('two processes starting together load it once', async () => {
    const own = await testDatabase();
    const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn', ...own.env });
    const open = () => openDatabase(config, { name: risk.name, entities: risk.entities, migrationsPath: risk.migrationsPath });
    const [a, b] = [await open(), await open()];
    try {
      await Promise.all([a, b].map((d) => ensureRiskData(d.orm.em.fork(), undefined, { lock: true })));
      const em = a.orm.em.fork();
      expect(await em.count(Crash, { source: 'fars' })).toBe(11_297);
      const cells = await em.getConnection().execute('select resolution, count(*)::int as n, sum(fatal)::int as fatal from "risk"."risk_crash_cells" group by resolution order by resolution');
      expect(cells.map((r: { fatal: number }) => r.fatal)).toEqual([11_297, 11_297, 11_297]);
    } finally {
      await a.close();
      await b.close();
      await own.drop();
    }
  }, 300_000);
});

describe('npm run risk:ingest', () => {
  it('loads a FARS file from the command line with progress output', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'risk-cli-'));
    const own = await testDatabase();
    try {
      const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: undefined, PGLITE_IN_MEMORY: 'false', LOG_LEVEL: 'warn', ...own.env } as NodeJS.ProcessEnv;
      if (!own.env.DATABASE_URL) delete env.DATABASE_URL;
      const { stdout } = await promisify(execFile)(process.execPath, ['subgraphs/risk/ingest-cli.ts', 'fars', FIXTURE], { env, timeout: 120_000 });
      expect(stdout).toMatch(/6 rows read, 4 loaded, skipped: 1 outside coverage, 1 without position/);
      expect(stdout).toMatch(/FARS: 4 of 6 crashes loaded/);
      expect(stdout).toMatch(/crash cells/);
      const bad = await promisify(execFile)(process.execPath, ['subgraphs/risk/ingest-cli.ts', 'nonsense'], { env }).catch((e: { code: number; stderr: string }) => e);
      expect((bad as { code: number }).code).toBe(2);
    } finally {
      await own.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
