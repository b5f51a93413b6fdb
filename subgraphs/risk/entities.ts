import { defineEntity, p } from '@mikro-orm/core';
import { batchEntities } from './batch/entities.ts';

/** A double precision column read as a JS number. */
const double = () => p.float().columnType('double precision');

/**
 * Risk Index tables. Reference data shared by every organisation: no `orgId` column, no partner data.
 * Every point-like row carries its H3 cell at each aggregation resolution (indexed), and the
 * aggregates are keyed by (resolution, cell).
 */

export const RESOLUTIONS = [5, 7, 9] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

export const SEVERITIES = ['fatal', 'injury', 'pdo'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Where a row came from: the project's generated sample, or an ingested real file/feed. */
export const SOURCES = ['sample', 'fars', 'feed'] as const;
export type DataSource = (typeof SOURCES)[number];

const cellColumns = {
  h3r5: p.string().length(16).index('risk_crashes_h3r5_idx'),
  h3r7: p.string().length(16).index('risk_crashes_h3r7_idx'),
  h3r9: p.string().length(16).index('risk_crashes_h3r9_idx'),
};

/** One crash. Fatal crashes follow the NHTSA FARS accident.csv layout; the sample also has injury and PDO crashes. */
export const CrashSchema = defineEntity({
  name: 'RiskCrash',
  tableName: 'risk_crashes',
  indexes: [{ name: 'risk_crashes_recent_idx', expression: 'create index "risk_crashes_recent_idx" on "risk"."risk_crashes" ("year" desc, "month" desc, "day" desc, "hour" desc, "case_number" asc)' }],
  properties: {
    /** `<source>-<YEAR>-<ST_CASE>`: re-ingesting a FARS file updates rather than duplicates. */
    id: p.string().length(40).primary(),
    source: p.enum(SOURCES),
    caseNumber: p.integer(),
    state: p.smallint(),
    year: p.smallint(),
    month: p.smallint(),
    day: p.smallint(),
    hour: p.smallint().nullable(),
    minute: p.smallint().nullable(),
    /** 0 = Monday 00:00 local time ... 167 = Sunday 23:00; null when the hour is unknown. */
    hourOfWeek: p.smallint().nullable(),
    latitude: double(),
    longitude: double(),
    severity: p.enum(SEVERITIES),
    fatalities: p.smallint().default(0),
    persons: p.smallint().nullable(),
    vehicles: p.smallint().nullable(),
    /** Pedestrians involved (FARS PEDS). */
    peds: p.smallint().nullable(),
    /** Drinking drivers involved (FARS DRUNK_DR). */
    drunkDrivers: p.smallint().nullable(),
    /** FARS RUR_URB: 1 rural, 2 urban (derived from ROAD_FNC before 2015). */
    ruralUrban: p.smallint().nullable(),
    county: p.integer().nullable(),
    city: p.integer().nullable(),
    weather: p.smallint().nullable(),
    weatherName: p.string().length(80).nullable(),
    lightCondition: p.smallint().nullable(),
    lightConditionName: p.string().length(80).nullable(),
    functionalSystem: p.smallint().nullable(),
    functionalSystemName: p.string().length(80).nullable(),
    ...cellColumns,
  },
});
export class Crash extends CrashSchema.class {}
CrashSchema.setClass(Crash);

/** A traffic counting station with its historical profile (168 hours of the week). */
export const SensorSchema = defineEntity({
  name: 'RiskTrafficSensor',
  tableName: 'risk_traffic_sensors',
  properties: {
    sensorId: p.string().length(64).primary(),
    source: p.enum(SOURCES),
    state: p.smallint(),
    latitude: double(),
    longitude: double(),
    functionalSystem: p.smallint(),
    /** Mean vehicles per hour, by hour of week (168 values). */
    volume: p.json<number[]>(),
    /** Mean speed in km/h, by hour of week (168 values). */
    speed: p.json<number[]>(),
    h3r5: p.string().length(16).index('risk_sensors_h3r5_idx'),
    h3r7: p.string().length(16).index('risk_sensors_h3r7_idx'),
    h3r9: p.string().length(16).index('risk_sensors_h3r9_idx'),
  },
});
export class TrafficSensor extends SensorSchema.class {}
SensorSchema.setClass(TrafficSensor);

/** One observation of an ingested realtime traffic feed. */
export const ObservationSchema = defineEntity({
  name: 'RiskTrafficObservation',
  tableName: 'risk_traffic_observations',
  uniques: [{ properties: ['sensorId', 'observedAt'], name: 'risk_observations_sensor_time_unique' }],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    sensorId: p.string().length(64),
    observedAt: p.datetime().index('risk_observations_observed_at_idx'),
    latitude: double(),
    longitude: double(),
    speedKph: double(),
    volumeVph: double().nullable(),
    h3r5: p.string().length(16).index('risk_observations_h3r5_idx'),
    h3r7: p.string().length(16).index('risk_observations_h3r7_idx'),
    h3r9: p.string().length(16).index('risk_observations_h3r9_idx'),
  },
});
export class TrafficObservation extends ObservationSchema.class {}
ObservationSchema.setClass(TrafficObservation);

/** Crash aggregates and the risk index of one H3 cell at one resolution. */
export const CrashCellSchema = defineEntity({
  name: 'RiskCrashCell',
  tableName: 'risk_crash_cells',
  properties: {
    resolution: p.smallint().primary(),
    cell: p.string().length(16).primary(),
    fatal: p.integer(),
    injury: p.integer(),
    pdo: p.integer(),
    fatalities: p.integer(),
    /** Area of the cell, km². */
    areaKm2: double(),
    /** Fatal crashes per km² per year. */
    fatalRate: double(),
    /** Fatalities per km² per year. */
    fatalityRate: double(),
    /** The rate the index maps: the mean of the two rates above (docs/risk-index.md). */
    rate: double(),
    /** 0-100 road risk index (see docs/risk-index.md). */
    riskIndex: double(),
    /** Counts by year: { "2014": [fatal, injury, pdo, fatalities], ... }. */
    byYear: p.json<Record<string, number[]>>(),
    /** Crash counts by hour of week, sparse: { "<0-167>": count } (most cells hold a few crashes). */
    byHourOfWeek: p.json<Record<string, number>>(),
    /** Crash counts by month (12 values, January first). */
    byMonth: p.json<number[]>(),
    /** Crash counts by FARS code: { "<code>": count }. */
    byWeather: p.json<Record<string, number>>(),
    byLight: p.json<Record<string, number>>(),
    byRoadClass: p.json<Record<string, number>>(),
  },
});
export class CrashCell extends CrashCellSchema.class {}
CrashCellSchema.setClass(CrashCell);

/** Historical traffic aggregates of one H3 cell at one resolution. */
export const TrafficCellSchema = defineEntity({
  name: 'RiskTrafficCell',
  tableName: 'risk_traffic_cells',
  properties: {
    resolution: p.smallint().primary(),
    cell: p.string().length(16).primary(),
    sensors: p.integer(),
    /** Sum over the cell's sensors of vehicles per hour, by hour of week. */
    volumeSum: p.json<number[]>(),
    /** Sum over the cell's sensors of speed x volume, by hour of week (for volume-weighted speeds). */
    speedVolumeSum: p.json<number[]>(),
  },
});
export class TrafficCell extends TrafficCellSchema.class {}
TrafficCellSchema.setClass(TrafficCell);

export const riskEntities = [Crash, TrafficSensor, TrafficObservation, CrashCell, TrafficCell, ...batchEntities];
