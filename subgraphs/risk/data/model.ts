import type { EntityManager } from '@mikro-orm/core';
import { getHexagonAreaAvg } from 'h3-js';
import type { Resolution } from '../entities.ts';
import { stateBoundaries } from '../geometry/coverage.ts';
import { readRows } from '../services/read.ts';

/**
 * The Risk Index model (docs/risk-index.md). An area's weight w is the mean of its fatal crashes and
 * its fatalities; its exposure e its area (km²) times the years of data. Its rate w / e is shrunk
 * towards the covered states' mean rate by empirical Bayes (a gamma prior with shape α and rate β
 * fitted by moments on the cells of the reference resolution, zeros included): (α + w) / (β + e),
 * so an area of a few km² with one crash does not jump to the top. The index is 100·R/(R+1) with
 * R = that rate / the reference rate (the median rate of the reference cells with a fatal crash):
 * an area at the reference scores 50. Neither depends on the H3 resolution a query uses.
 *
 * The version changes whenever the same data would give an area another index.
 */
export const MODEL_VERSION = '2.0';
/** H3 resolution whose cells (5.2 km², a neighbourhood) fit the prior and give the reference rate. */
export const REFERENCE_RESOLUTION: Resolution = 7;
/** Largest prior shape: with few data the prior weighs at most one fatal crash. */
const MAX_PRIOR_SHAPE = 1;

/** What the model is fitted from: the reference cells with a fatal crash, summed. */
export interface ReferenceCells {
  /** Σ w over them. */
  weight: number;
  /** Σ (w / cell km² / years)². */
  rateSquares: number;
  /** Lower median of their rates (w / km² / years). */
  medianRate: number;
}

export interface RiskModel {
  version: string;
  /** Years of crash data (rates are per year). */
  years: number;
  firstYear: number | null;
  lastYear: number | null;
  /** Mean rate over the covered states (the prior mean α/β). */
  meanRate: number;
  /** Rate scoring 50. */
  referenceRate: number;
  /** Prior shape α (a weight) and rate β (km²·years). */
  priorWeight: number;
  priorExposure: number;
}

/** Fits the prior by moments over every reference cell of the covered states (`totalKm2`), those without a crash counting 0. */
export function fitModel(ref: ReferenceCells, totalKm2: number, firstYear: number | null, lastYear: number | null): RiskModel {
  const years = firstYear !== null && lastYear !== null ? lastYear - firstYear + 1 : 1;
  const base = { version: MODEL_VERSION, years, firstYear, lastYear, referenceRate: ref.medianRate };
  const cellKm2 = getHexagonAreaAvg(REFERENCE_RESOLUTION, 'km2');
  const cells = totalKm2 / cellKm2;
  const mean = totalKm2 > 0 ? ref.weight / totalKm2 / years : 0;
  if (mean <= 0) return { ...base, meanRate: 0, priorWeight: 0, priorExposure: 0 };
  // Variance of the cells' rates less what Poisson chance alone gives them.
  const spread = ref.rateSquares / cells - mean ** 2 - mean / (cellKm2 * years);
  const variance = Math.max(spread, mean ** 2 / MAX_PRIOR_SHAPE);
  return { ...base, meanRate: mean, priorWeight: mean ** 2 / variance, priorExposure: mean / variance };
}

/** The weight the index counts: fatal crashes and fatalities alike. */
export const weightOf = (fatalCrashes: number, fatalities: number) => (fatalCrashes + fatalities) / 2;

export interface AreaScore {
  /** w / e: the area's own rate. */
  rate: number;
  /** (α + w) / (β + e). */
  smoothedRate: number;
  /** e / (β + e): the share of the area's own data in the smoothed rate. */
  credibility: number;
  index: number;
}

/** The model applied to an area (or a cell) of `km2` holding `weight` (see weightOf). */
export function scoreArea(model: RiskModel, weight: number, km2: number): AreaScore {
  const exposure = km2 * model.years;
  const rate = exposure > 0 ? weight / exposure : 0;
  const pooled = model.priorExposure + exposure;
  const smoothedRate = pooled > 0 ? (model.priorWeight + weight) / pooled : 0;
  const index = smoothedRate <= 0 || model.referenceRate <= 0 ? 0
    : Math.round((1000 * smoothedRate) / (smoothedRate + model.referenceRate)) / 10;
  return { rate, smoothedRate, credibility: pooled > 0 ? exposure / pooled : 0, index };
}

/** The covered states' area, km²: the reference cells without a crash are the rest of it. */
export const coveredStatesKm2 = () => stateBoundaries().reduce((s, b) => s + b.km2, 0);

/** Models per database (keyed by the ORM's configuration, shared by its forks), kept for a minute; a rebuild forgets it. */
const cache = new WeakMap<object, { value: Promise<RiskModel>; at: number }>();
const TTL_MS = 60_000;

export const forgetRiskModel = (em: EntityManager) => cache.delete(em.config);

/** The model of the stored aggregates: the same fit rebuildAggregates gave the cells, from one summing query. */
export function riskModel(em: EntityManager): Promise<RiskModel> {
  const hit = cache.get(em.config);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.value;
  const value = (async () => {
    type Row = { weight: number | null; squares: number | null; median: number | null; first: number | null; last: number | null };
    const [row] = await readRows<Row>(em,
      `select sum(("fatal" + "fatalities") / 2.0)::float8 as "weight", sum("rate" * "rate") as "squares",
         percentile_disc(0.5) within group (order by "rate") as "median",
         (select min("year") from "risk"."risk_crashes") as "first", (select max("year") from "risk"."risk_crashes") as "last"
       from "risk"."risk_crash_cells" where "resolution" = ? and "fatal" > 0`, [REFERENCE_RESOLUTION]);
    return fitModel({ weight: Number(row.weight ?? 0), rateSquares: Number(row.squares ?? 0), medianRate: Number(row.median ?? 0) },
      coveredStatesKm2(), row.first === null ? null : Number(row.first), row.last === null ? null : Number(row.last));
  })();
  cache.set(em.config, { value, at: Date.now() });
  value.catch(() => cache.delete(em.config));
  return value;
}
