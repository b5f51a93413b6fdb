import { currentCalibration, scoreFromRelativity } from './calibration.ts';
import { REASON_CODES, relativityOf, topReasons, type ReasonCode, type ScoreInput } from './relativity.ts';

/**
 * The model's version: bump it whenever a relativity table, the reference population or the
 * anchors change, so a stored or reported score can always be traced to the model that made it.
 */
export const MODEL_VERSION = 'prequal-mult-1.0.0';

export interface CoverageScore {
  score: number;
  modelVersion: string;
  relativity: number;
  reasons: { code: ReasonCode; description: string }[];
}

/** Scores one driver: deterministic for the same input (including `asOf`). */
export function coverageScore(input: ScoreInput): CoverageScore {
  const { relativity, penalties } = relativityOf(input);
  return {
    score: scoreFromRelativity(relativity, currentCalibration()),
    modelVersion: MODEL_VERSION,
    relativity,
    reasons: topReasons(penalties).map((code) => ({ code, description: REASON_CODES[code] })),
  };
}

export type { ScoreInput } from './relativity.ts';
