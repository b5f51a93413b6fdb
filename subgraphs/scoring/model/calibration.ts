import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { referencePopulation } from './population.ts';
import { relativityOf } from './relativity.ts';

/**
 * Score anchors: population quantile of the relativity → score. The safest driver of the
 * reference population scores 900, the safest 40% score 600 or more, the median 500, the riskiest
 * 10% 300 or less and the riskiest 1% 100 or less. Between anchors the score is linear in
 * ln(relativity); past the last anchor the last segment continues, clamped to 0-900.
 */
export const ANCHORS: readonly (readonly [quantile: number, score: number])[] = [
  [0, 900], [0.4, 600], [0.5, 500], [0.9, 300], [0.99, 100],
];

export const SCORE_MIN = 0;
export const SCORE_MAX = 900;

export interface Calibration {
  /** [ln(relativity), score] knots, ln strictly increasing, score decreasing. */
  knots: [number, number][];
  /** The relativity at each anchor, for the documentation and the closing figures. */
  anchors: { quantile: number; score: number; relativity: number }[];
}

/** Quantile of sorted values (nearest rank below). */
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.floor(q * (sorted.length - 1))))];

export function calibrate(population = referencePopulation()): Calibration {
  const ln = population.map((p) => Math.log(relativityOf(p).relativity)).sort((a, b) => a - b);
  const knots: [number, number][] = [];
  for (const [q, score] of ANCHORS) {
    let x = quantile(ln, q);
    const previous = knots[knots.length - 1];
    if (previous && x <= previous[0]) x = previous[0] + 1e-6;
    knots.push([x, score]);
  }
  return { knots, anchors: ANCHORS.map(([q, score], i) => ({ quantile: q, score, relativity: Math.exp(knots[i][0]) })) };
}

/**
 * The calibration of the current model, computed once from the seeded population (a fixed result:
 * same seed, same population) and kept in calibration.json, so no process spends the ~0.5 s of CPU
 * at start. `npm run calibrate` writes it again after a change to the model; the score model's
 * test fails while the file and `calibrate()` disagree.
 */
export const CALIBRATION_FILE = fileURLToPath(new URL('./calibration.json', import.meta.url));
let cached: Calibration | null = null;
export const currentCalibration = (): Calibration => (cached ??= JSON.parse(readFileSync(CALIBRATION_FILE, 'utf8')) as Calibration);

/** Maps a relativity to the 0-900 score through the knots (monotone: a higher relativity never scores more). */
export function scoreFromRelativity(relativity: number, calibration: Calibration = currentCalibration()): number {
  const x = Math.log(relativity);
  const { knots } = calibration;
  let i = 0;
  while (i < knots.length - 2 && x > knots[i + 1][0]) i += 1;
  const [x0, y0] = knots[i];
  const [x1, y1] = knots[i + 1];
  const y = y0 + ((x - x0) * (y1 - y0)) / (x1 - x0);
  return Math.round(Math.min(SCORE_MAX, Math.max(SCORE_MIN, y)));
}
