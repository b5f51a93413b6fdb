import type { EntityManager } from '@mikro-orm/core';
import { getHexagonAreaAvg } from 'h3-js';
import { Crash, CrashCell, RESOLUTIONS, TrafficCell, TrafficSensor, type Resolution } from '../entities.ts';
import { cellColumn } from '../geometry/cells.ts';

/** EPDO severity weights: a fatal crash counts 12, an injury crash 3, a property-damage-only crash 1. */
export const SEVERITY_WEIGHT = { fatal: 12, injury: 3, pdo: 1 } as const;
/** Road length one counting station stands for, km. */
export const SENSOR_SEGMENT_KM = 2;
/** Background exposure of roads without a station: million vehicle-km per km² per year. */
export const BACKGROUND_MVKT_PER_KM2 = 0.5;

const BATCH = 500;

/** Maps a rate to 0-100: half-saturation at the median rate of the resolution (the median cell scores 50). */
export const indexFromRate = (rate: number, median: number) => (rate <= 0 || median <= 0 ? 0 : Math.round((1000 * rate) / (rate + median)) / 10);

async function insertBatches<T extends object>(em: EntityManager, entity: new () => T, rows: object[]) {
  for (let i = 0; i < rows.length; i += BATCH) await em.insertMany(entity as never, rows.slice(i, i + BATCH) as never);
}

/**
 * Rebuilds the per-(resolution, cell) aggregates from the crash and station tables: counts by severity,
 * by year and by hour of week, exposure, and the 0-100 risk index; and the traffic profiles.
 */
export async function rebuildAggregates(em: EntityManager): Promise<{ crashCells: number; trafficCells: number }> {
  const crashes = await em.find(Crash, {}, { fields: ['severity', 'fatalities', 'year', 'hourOfWeek', 'h3r5', 'h3r7', 'h3r9'] as never, disableIdentityMap: true });
  const sensors = await em.find(TrafficSensor, {}, { disableIdentityMap: true });
  const years = new Set(crashes.map((c) => c.year));
  const span = years.size ? Math.max(...years) - Math.min(...years) + 1 : 1;
  const crashRows: object[] = [];
  const trafficRows: object[] = [];
  for (const res of RESOLUTIONS) {
    const column = cellColumn(res as Resolution);
    const traffic = new Map<string, { sensors: number; volumeSum: number[]; speedVolumeSum: number[]; dailyVehicles: number }>();
    for (const s of sensors) {
      const cell = s[column];
      let t = traffic.get(cell);
      if (!t) traffic.set(cell, t = { sensors: 0, volumeSum: new Array(168).fill(0), speedVolumeSum: new Array(168).fill(0), dailyVehicles: 0 });
      t.sensors++;
      for (let h = 0; h < 168; h++) {
        t.volumeSum[h] += s.volume[h];
        t.speedVolumeSum[h] += s.volume[h] * s.speed[h];
      }
      t.dailyVehicles += s.volume.reduce((a, b) => a + b, 0) / 7;
    }
    const cells = new Map<string, { fatal: number; injury: number; pdo: number; fatalities: number; byYear: Record<string, number[]>; byHourOfWeek: number[] }>();
    for (const c of crashes) {
      const cell = c[column];
      let a = cells.get(cell);
      if (!a) cells.set(cell, a = { fatal: 0, injury: 0, pdo: 0, fatalities: 0, byYear: {}, byHourOfWeek: new Array(168).fill(0) });
      a[c.severity]++;
      a.fatalities += c.fatalities;
      const y = (a.byYear[c.year] ??= [0, 0, 0]);
      y[c.severity === 'fatal' ? 0 : c.severity === 'injury' ? 1 : 2]++;
      if (c.hourOfWeek !== null && c.hourOfWeek !== undefined) a.byHourOfWeek[c.hourOfWeek]++;
    }
    const background = getHexagonAreaAvg(res, 'km2') * BACKGROUND_MVKT_PER_KM2;
    const rated = [...cells].map(([cell, a]) => {
      const weightedPerYear = (a.fatal * SEVERITY_WEIGHT.fatal + a.injury * SEVERITY_WEIGHT.injury + a.pdo * SEVERITY_WEIGHT.pdo) / span;
      const exposureMvkt = background + ((traffic.get(cell)?.dailyVehicles ?? 0) * 365 * SENSOR_SEGMENT_KM) / 1e6;
      return { cell, a, weightedPerYear, exposureMvkt, rate: weightedPerYear / exposureMvkt };
    });
    const rates = rated.map((r) => r.rate).sort((x, y) => x - y);
    const median = rates.length ? rates[Math.ceil(rates.length / 2) - 1] : 0; // as percentile_disc(0.5)
    for (const r of rated) {
      crashRows.push({
        resolution: res, cell: r.cell, fatal: r.a.fatal, injury: r.a.injury, pdo: r.a.pdo, fatalities: r.a.fatalities,
        weightedPerYear: Math.round(r.weightedPerYear * 1000) / 1000, exposureMvkt: Math.round(r.exposureMvkt * 10000) / 10000,
        riskIndex: indexFromRate(r.rate, median), byYear: r.a.byYear, byHourOfWeek: r.a.byHourOfWeek,
      });
    }
    for (const [cell, t] of traffic) {
      trafficRows.push({ resolution: res, cell, sensors: t.sensors, volumeSum: t.volumeSum, speedVolumeSum: t.speedVolumeSum.map((v) => Math.round(v)) });
    }
  }
  medianCache.delete(em.config);
  await em.transactional(async (tx) => {
    await tx.nativeDelete(CrashCell, {});
    await tx.nativeDelete(TrafficCell, {});
    await insertBatches(tx, CrashCell, crashRows);
    await insertBatches(tx, TrafficCell, trafficRows);
  });
  return { crashCells: crashRows.length, trafficCells: trafficRows.length };
}

/** Medians per database (keyed by the ORM's configuration, shared by its forks) and resolution, kept for a minute. */
const medianCache = new WeakMap<object, Map<number, { value: number; at: number }>>();
const MEDIAN_TTL_MS = 60_000;

/** The median cell rate of a resolution (the half-saturation point of the index), computed by the database. */
export async function medianRate(em: EntityManager, res: Resolution): Promise<number> {
  let cache = medianCache.get(em.config);
  if (!cache) medianCache.set(em.config, cache = new Map());
  const hit = cache.get(res);
  if (hit && Date.now() - hit.at < MEDIAN_TTL_MS) return hit.value;
  const rows = await em.getConnection().execute<{ m: number | string | null }[]>(
    'select percentile_disc(0.5) within group (order by weighted_per_year / exposure_mvkt) as m from "risk"."risk_crash_cells" where resolution = ?', [res]);
  const value = Number(rows[0]?.m ?? 0);
  cache.set(res, { value, at: Date.now() });
  return value;
}
