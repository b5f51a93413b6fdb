import { badInput } from '../../platform/errors.ts';
import { isCalendarDate } from '../../platform/scalars.ts';

/** Today in UTC as YYYY-MM-DD: effective dates are calendar days. */
export const today = () => new Date().toISOString().slice(0, 10);

const MAX_ID = 255;

/** An identifier supplied by the caller: a non-empty string of at most 255 characters, kept as given. */
export function checkId(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw badInput(`${field} must be a non-empty string`, field);
  if (value.length > MAX_ID) throw badInput(`${field} must be at most ${MAX_ID} characters`, field);
  if (value.includes('\u0000')) throw badInput(`${field} must not contain NUL characters`, field);
  return value;
}

/** An optional id: generated when absent or null. */
export const idOrGenerated = (value: unknown, field: string): string =>
  value == null ? crypto.randomUUID() : checkId(value, field);

/** A calendar day (YYYY-MM-DD); `fallback` when absent. */
export function checkDate(value: unknown, field: string, fallback?: string): string {
  if (value == null) {
    if (fallback !== undefined) return fallback;
    throw badInput(`${field} is required (YYYY-MM-DD)`, field);
  }
  if (typeof value !== 'string' || !isCalendarDate(value)) throw badInput(`${field} must be a real calendar day as YYYY-MM-DD`, field);
  return value;
}

/** A short free-text value (trimmed, non-empty, bounded). */
export function checkText(value: unknown, field: string, max: number): string {
  if (typeof value !== 'string' || value.trim() === '') throw badInput(`${field} must be a non-empty string`, field);
  if (value.includes('\u0000')) throw badInput(`${field} must not contain NUL characters`, field);
  if (value.trim().length > max) throw badInput(`${field} must be at most ${max} characters`, field);
  return value.trim();
}

export const optionalText = (value: unknown, field: string, max: number): string | null =>
  value == null ? null : checkText(value, field, max);

/** A JSON object (or null). */
export function checkObject(value: unknown, field: string): Record<string, unknown> | null {
  if (value == null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw badInput(`${field} must be a JSON object`, field);
  if (JSON.stringify(value).length > 16_384) throw badInput(`${field} must be at most 16 KiB of JSON`, field);
  return value as Record<string, unknown>;
}

/** Parses one of `values` without regard to case (e.g. "active" for "Active"). */
export function oneOf<T extends string>(values: readonly T[], value: unknown, field: string): T {
  const found = typeof value === 'string' ? values.find((v) => v.toLowerCase() === value.trim().toLowerCase()) : undefined;
  if (!found) throw badInput(`${field} must be one of ${values.join(', ')} (any case)`, field);
  return found;
}
