import { FUNCTIONAL_SYSTEM, LIGHT_CONDITION, WEATHER } from '../data/codes.ts';
import type { AreaQuery } from './area.ts';

export const DAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] as const;
export const MONTHS = ['JANUARY', 'FEBRUARY', 'MARCH', 'APRIL', 'MAY', 'JUNE', 'JULY', 'AUGUST', 'SEPTEMBER', 'OCTOBER', 'NOVEMBER', 'DECEMBER'] as const;

function addCounts(into: Map<string, number>, counts: Record<string, number>) {
  for (const [code, n] of Object.entries(counts)) into.set(code, (into.get(code) ?? 0) + n);
}

/** Counts by FARS code, most frequent first, each code with its name ("null": not recorded). */
const decoded = (counts: Map<string, number>, table: Record<number, string>) => [...counts]
  .map(([code, crashes]) => ({ code: code === 'null' ? null : Number(code), name: code === 'null' ? 'Not recorded' : table[Number(code)] ?? `Code ${code}`, crashes }))
  .sort((a, b) => b.crashes - a.crashes || (a.code ?? 999) - (b.code ?? 999));

/** Crash counts of the area (the crashes its filter matches) by severity, year, month, hour of week (local time), weather, light and road class. */
export async function accidentSummary(q: AreaQuery) {
  const cells = await q.filteredCells();
  const byYear = new Map<number, number[]>();
  const byHour = new Array(168).fill(0);
  const byMonth = new Array(12).fill(0);
  const weather = new Map<string, number>(), light = new Map<string, number>(), road = new Map<string, number>();
  let fatal = 0, injury = 0, pdo = 0, fatalities = 0;
  for (const c of cells) {
    fatal += c.fatal; injury += c.injury; pdo += c.pdo; fatalities += c.fatalities;
    for (const [year, counts] of Object.entries(c.byYear)) {
      const y = byYear.get(Number(year)) ?? [0, 0, 0, 0];
      for (let i = 0; i < 4; i++) y[i] += counts[i] ?? 0;
      byYear.set(Number(year), y);
    }
    for (const [h, n] of Object.entries(c.byHourOfWeek)) byHour[Number(h)] += n;
    for (let m = 0; m < 12; m++) byMonth[m] += c.byMonth[m] ?? 0;
    addCounts(weather, c.byWeather);
    addCounts(light, c.byLight);
    addCounts(road, c.byRoadClass);
  }
  const sources = q.cells.length ? await q.sources() : null;
  return {
    total: fatal + injury + pdo, fatal, injury, propertyDamageOnly: pdo, fatalities,
    byYear: [...byYear].sort(([a], [b]) => a - b).map(([year, [f, i, p, k]]) => ({ year, fatal: f, injury: i, propertyDamageOnly: p, total: f + i + p, fatalities: k })),
    byMonth: byMonth.map((crashes, m) => ({ month: m + 1, name: MONTHS[m], crashes })),
    byHourOfWeek: byHour.map((crashes, h) => ({ hourOfWeek: h, dayOfWeek: DAYS[Math.floor(h / 24)], hour: h % 24, crashes })),
    byWeather: decoded(weather, WEATHER),
    byLight: decoded(light, LIGHT_CONDITION),
    byRoadClass: decoded(road, FUNCTIONAL_SYSTEM),
    source: sources?.crashes.source ?? null,
    sample: sources?.crashes.sample ?? false,
  };
}
