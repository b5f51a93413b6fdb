import type { TrafficCell, TrafficObservation } from '../entities.ts';
import { cellColumn } from '../geometry/cells.ts';
import { currentHourOfWeek } from '../data/codes.ts';
import { cellArray, selectList, type AreaQuery } from './area.ts';
import { DAYS } from './accident-summary.ts';
import { readRows } from './read.ts';

/** Observations newer than this are "fresh". */
export const FRESH_MINUTES = 30;
export const MAX_OBSERVATIONS = 200;

type Observation = Pick<TrafficObservation, 'sensorId' | 'observedAt' | 'latitude' | 'longitude' | 'speedKph' | 'volumeVph'>;
const OBSERVATION_SELECT = selectList(['sensor_id', 'observed_at', 'latitude', 'longitude', 'speed_kph', 'volume_vph']);

const round = (v: number, d = 1) => Math.round(v * 10 ** d) / 10 ** d;

function profileAt(cells: TrafficCell[], h: number) {
  let volume = 0, speedVolume = 0, sensors = 0;
  for (const c of cells) { volume += c.volumeSum[h]; speedVolume += c.speedVolumeSum[h]; sensors += c.sensors; }
  return {
    hourOfWeek: h, dayOfWeek: DAYS[Math.floor(h / 24)], hour: h % 24,
    meanVolumeVph: sensors ? round(volume / sensors) : null,
    meanSpeedKph: volume > 0 ? round(speedVolume / volume) : null,
  };
}

/** Speed and volume by hour of week (local time), averaged over the area's counting stations. */
export async function historicalTraffic(q: AreaQuery) {
  const cells = await q.trafficCells();
  const sensors = cells.reduce((s, c) => s + c.sensors, 0);
  return {
    sensors,
    profile: sensors ? Array.from({ length: 168 }, (_, h) => profileAt(cells, h)) : [],
    sample: q.cells.length ? (await q.sources()).traffic.sample : false,
  };
}

/** The latest fresh feed observation per station in the area; else the current hour of the historical profile. */
export async function realtimeTraffic(q: AreaQuery, now = new Date()) {
  const base = { freshWithinMinutes: FRESH_MINUTES };
  if (!q.cells.length || q.resolution === null) {
    return { ...base, source: 'NONE', asOf: null, hourOfWeek: null, sensors: 0, meanSpeedKph: null, meanVolumeVph: null, observations: [], message: 'No traffic data: the area is outside coverage.', sample: false };
  }
  const since = new Date(now.getTime() - FRESH_MINUTES * 60_000);
  const until = new Date(now.getTime() + 5 * 60_000);
  // Most areas have no fresh observation: a probe on the time index alone spares sending the area's cells.
  const fresh = await readRows(q.em, 
    'select 1 as "fresh" from "risk"."risk_traffic_observations" where "observed_at" >= ? and "observed_at" <= ? limit 1', [since, until]);
  const rows = !fresh.length ? [] : await readRows<Observation>(q.em, 
    `select ${OBSERVATION_SELECT} from "risk"."risk_traffic_observations"
     where "${cellColumn(q.resolution)}" = any(?::text[]) and "observed_at" >= ? and "observed_at" <= ? order by "observed_at" desc limit 5000`,
    [cellArray(q.cells), since, until]);
  const latest = new Map<string, Observation>();
  for (const r of rows) if (!latest.has(r.sensorId)) latest.set(r.sensorId, r);
  const observations = [...latest.values()];
  if (observations.length) {
    const withVolume = observations.filter((o) => o.volumeVph !== null && o.volumeVph !== undefined);
    return {
      ...base, source: 'REALTIME', asOf: new Date(observations[0].observedAt), hourOfWeek: null, sensors: observations.length,
      meanSpeedKph: round(observations.reduce((s, o) => s + o.speedKph, 0) / observations.length),
      meanVolumeVph: withVolume.length ? round(withVolume.reduce((s, o) => s + (o.volumeVph ?? 0), 0) / withVolume.length) : null,
      observations: observations.slice(0, MAX_OBSERVATIONS).map((o) => ({
        sensorId: o.sensorId, observedAt: new Date(o.observedAt), latitude: o.latitude, longitude: o.longitude, speedKph: o.speedKph, volumeVph: o.volumeVph ?? null,
      })),
      message: `Latest feed observations of the last ${FRESH_MINUTES} minutes.`, sample: false,
    };
  }
  const cells = await q.trafficCells();
  const sensors = cells.reduce((s, c) => s + c.sensors, 0);
  const h = currentHourOfWeek(q.timeZone ?? 'UTC', now);
  const p = profileAt(cells, h);
  return {
    ...base, source: sensors ? 'HISTORICAL_PROFILE' : 'NONE', asOf: now, hourOfWeek: h, sensors,
    meanSpeedKph: p.meanSpeedKph, meanVolumeVph: p.meanVolumeVph, observations: [],
    message: sensors
      ? `No fresh feed observation in the area: the historical profile for ${p.dayOfWeek} ${String(p.hour).padStart(2, '0')}:00 local time.`
      : 'No fresh feed observation and no counting station in the area.',
    sample: sensors ? (await q.sources()).traffic.sample : false,
  };
}
