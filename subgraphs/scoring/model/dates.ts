/** Date arithmetic on YYYY-MM-DD strings, in UTC, so results never depend on the host's time zone. */

const DAY_MS = 86_400_000;
export const YEAR_DAYS = 365.25;

export const toDay = (date: string): number => Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10))) / DAY_MS;
export const fromDay = (day: number): string => new Date(Math.round(day) * DAY_MS).toISOString().slice(0, 10);

/** The same month and day `years` calendar years later (29 February falls back to 28 February). */
function anniversary(date: string, years: number): number {
  const y = Number(date.slice(0, 4)) + years;
  const m = Number(date.slice(5, 7)) - 1;
  const d = Number(date.slice(8, 10));
  const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return Date.UTC(y, m, Math.min(d, last)) / DAY_MS;
}

/**
 * Calendar years from `from` to `to`: whole years by anniversary (so ten years after 2016-11-22 is
 * exactly 10 on 2026-11-22) plus the fraction of the year after; negative when `from` is later.
 */
export function yearsBetween(from: string, to: string): number {
  if (to < from) return -yearsBetween(to, from);
  const whole = ageOn(from, to);
  const start = anniversary(from, whole);
  const next = anniversary(from, whole + 1);
  return whole + (toDay(to) - start) / (next - start);
}

/** Whole years of age on `asOf` for someone born on `dateOfBirth` (birthdays counted by calendar). */
export function ageOn(dateOfBirth: string, asOf: string): number {
  const years = Number(asOf.slice(0, 4)) - Number(dateOfBirth.slice(0, 4));
  // Same-length 'MM-DD' strings compare as dates do.
  return years - (asOf.slice(5) < dateOfBirth.slice(5) ? 1 : 0);
}

export const addYears = (date: string, years: number): string => fromDay(toDay(date) + years * YEAR_DAYS);

export const today = (): string => new Date().toISOString().slice(0, 10);
