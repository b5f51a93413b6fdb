import type { AcdCategory, Severity } from './summary.ts';

/**
 * ACD classification: the first letter gives the category (compatibility notes: A alcohol/drugs,
 * B and D duties failed, E and F equipment, M maneuvers, S speeding, U unclassified, W withdrawals);
 * a small table of well-known codes gives the severity (major/serious/minor as in 49 CFR 383.51),
 * and any other code takes its category's default severity. Unknown codes are kept as they are.
 */
const CATEGORY_BY_LETTER: Record<string, AcdCategory> = {
  A: 'ALCOHOL_DRUGS', B: 'DUTIES_FAILED', D: 'DUTIES_FAILED', E: 'EQUIPMENT', F: 'EQUIPMENT',
  M: 'MANEUVERS', S: 'SPEEDING', U: 'UNCLASSIFIED', W: 'WITHDRAWAL',
};

const DEFAULT_SEVERITY: Record<AcdCategory, Severity> = {
  ALCOHOL_DRUGS: 'MAJOR',
  DUTIES_FAILED: 'SERIOUS',
  EQUIPMENT: 'MINOR',
  MANEUVERS: 'MINOR',
  SPEEDING: 'MINOR',
  UNCLASSIFIED: 'MINOR',
  WITHDRAWAL: 'MINOR',
};

/** Known codes whose severity differs from their category's default. */
const KNOWN_SEVERITY: Record<string, Severity> = {
  // Duties failed: leaving the scene, fleeing, vehicular homicide/assault, driving while withdrawn.
  B01: 'MAJOR', B02: 'MAJOR', B03: 'MAJOR', B04: 'MAJOR', B14: 'MAJOR', B19: 'MAJOR', B20: 'MAJOR', B21: 'MAJOR',
  B22: 'MAJOR', B23: 'MAJOR', B24: 'MAJOR', B25: 'MAJOR', B26: 'MAJOR', B27: 'MAJOR', D45: 'MAJOR',
  // Paperwork and financial duties: non-moving, minor.
  D35: 'MINOR', D70: 'MINOR', D72: 'MINOR', D74: 'MINOR', D75: 'MINOR', D78: 'MINOR',
  // Speeding: 15 mph and more over the limit is serious (383.51 "excessive speeding").
  S95: 'SERIOUS', S96: 'SERIOUS', S97: 'SERIOUS', S98: 'SERIOUS', S99: 'SERIOUS',
  // Maneuvers: reckless/careless driving, racing, following too close, erratic lane changes.
  M80: 'SERIOUS', M81: 'SERIOUS', M82: 'SERIOUS', M84: 'SERIOUS', U07: 'SERIOUS', U08: 'MAJOR', U09: 'SERIOUS',
  M20: 'SERIOUS', M21: 'SERIOUS', M22: 'SERIOUS', M23: 'SERIOUS', M24: 'SERIOUS',
};

/** Non-moving codes: equipment (E, F), withdrawals (W) and paperwork duties (the D codes above marked minor). */
const NON_MOVING = new Set(['D35', 'D70', 'D72', 'D74', 'D75', 'D78']);

export interface AcdClass {
  code: string | null;
  letter: string | null;
  category: AcdCategory;
  severity: Severity;
  moving: boolean;
}

/** Classes an ACD code (any case, unknown codes included) by its first letter and the known-code table. */
export function classifyAcd(raw: string | null | undefined): AcdClass {
  const code = typeof raw === 'string' && raw.trim() ? raw.trim().toUpperCase() : null;
  const letter = code ? code[0] : null;
  const category = (letter && CATEGORY_BY_LETTER[letter]) || 'UNCLASSIFIED';
  const severity = (code && KNOWN_SEVERITY[code]) || DEFAULT_SEVERITY[category];
  const moving = !(category === 'EQUIPMENT' || category === 'WITHDRAWAL' || (code !== null && NON_MOVING.has(code)));
  return { code, letter, category, severity, moving };
}

/** A provider-stated severity in any case, or null when absent or not one of ours. */
export function parseSeverity(value: unknown): Severity | null {
  if (typeof value !== 'string') return null;
  const upper = value.trim().toUpperCase();
  return upper === 'MINOR' || upper === 'SERIOUS' || upper === 'MAJOR' ? upper : null;
}
