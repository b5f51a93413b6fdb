import type { AreaQuery } from './area.ts';

export const DAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] as const;

/** Crash counts of the area by severity, by year and by hour of week (local time). */
export async function accidentSummary(q: AreaQuery) {
  const cells = await q.crashCells();
  const byYear = new Map<number, number[]>();
  const byHour = new Array(168).fill(0);
  let fatal = 0, injury = 0, pdo = 0, fatalities = 0;
  for (const c of cells) {
    fatal += c.fatal; injury += c.injury; pdo += c.pdo; fatalities += c.fatalities;
    for (const [year, counts] of Object.entries(c.byYear)) {
      const y = byYear.get(Number(year)) ?? [0, 0, 0];
      for (let i = 0; i < 3; i++) y[i] += counts[i];
      byYear.set(Number(year), y);
    }
    for (let h = 0; h < 168; h++) byHour[h] += c.byHourOfWeek[h] ?? 0;
  }
  return {
    total: fatal + injury + pdo, fatal, injury, propertyDamageOnly: pdo, fatalities,
    byYear: [...byYear].sort(([a], [b]) => a - b).map(([year, [f, i, p]]) => ({ year, fatal: f, injury: i, propertyDamageOnly: p, total: f + i + p })),
    byHourOfWeek: byHour.map((crashes, h) => ({ hourOfWeek: h, dayOfWeek: DAYS[Math.floor(h / 24)], hour: h % 24, crashes })),
    sample: q.cells.length ? await q.sample('crashes') : false,
  };
}
