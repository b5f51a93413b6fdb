import { FUNCTIONAL_SYSTEM, LIGHT_CONDITION, WEATHER } from '../data/codes.ts';
import { cellsParameter, type AreaQuery } from './area.ts';

export const DAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] as const;
export const MONTHS = ['JANUARY', 'FEBRUARY', 'MARCH', 'APRIL', 'MAY', 'JUNE', 'JULY', 'AUGUST', 'SEPTEMBER', 'OCTOBER', 'NOVEMBER', 'DECEMBER'] as const;

/**
 * The area's counts and breakdowns summed by the database over its cells' stored breakdowns, so
 * only a few hundred numbers travel whatever the number of cells.
 */
const SUMS = `with c as (select * from "risk"."risk_crash_cells" where "resolution" = ? and "cell" = any(?::text[]))
  select 'total' as dim, null as key, sum(fatal)::int as a, sum(injury)::int as b, sum(pdo)::int as c, sum(fatalities)::int as d from c
  union all select 'year', e.key, sum((e.value->>0)::int), sum((e.value->>1)::int), sum((e.value->>2)::int), sum((e.value->>3)::int) from c, jsonb_each(c.by_year) e group by e.key
  union all select 'month', (e.i - 1)::text, sum(e.v::int), 0, 0, 0 from c, jsonb_array_elements_text(c.by_month) with ordinality e(v, i) group by e.i
  union all select 'hour', e.key, sum(e.value::int), 0, 0, 0 from c, jsonb_each_text(c.by_hour_of_week) e group by e.key
  union all select 'weather', e.key, sum(e.value::int), 0, 0, 0 from c, jsonb_each_text(c.by_weather) e group by e.key
  union all select 'light', e.key, sum(e.value::int), 0, 0, 0 from c, jsonb_each_text(c.by_light) e group by e.key
  union all select 'road', e.key, sum(e.value::int), 0, 0, 0 from c, jsonb_each_text(c.by_road_class) e group by e.key`;

type SumRow = { dim: string; key: string | null; a: number | null; b: number; c: number; d: number };

/** Counts by FARS code, most frequent first, each code with its name ("null": not recorded). */
const decoded = (rows: SumRow[], table: Record<number, string>) => rows
  .map((r) => ({ code: r.key === 'null' ? null : Number(r.key), name: r.key === 'null' ? 'Not recorded' : table[Number(r.key)] ?? `Code ${r.key}`, crashes: Number(r.a) }))
  .sort((x, y) => y.crashes - x.crashes || (x.code ?? 999) - (y.code ?? 999));

/** Crash counts of the area by severity, year, month, hour of week (local time), weather, light and road class. */
export async function accidentSummary(q: AreaQuery) {
  const rows: SumRow[] = q.cells.length && q.resolution !== null
    ? await q.em.getConnection().execute(SUMS, [q.resolution, cellsParameter(q.cells)])
    : [];
  const of = (dim: string) => rows.filter((r) => r.dim === dim);
  const total = of('total')[0];
  const [fatal, injury, pdo, fatalities] = total ? [total.a ?? 0, total.b ?? 0, total.c ?? 0, total.d ?? 0].map(Number) : [0, 0, 0, 0];
  const byHour = new Array(168).fill(0);
  for (const r of of('hour')) byHour[Number(r.key)] = Number(r.a);
  const byMonth = new Array(12).fill(0);
  for (const r of of('month')) byMonth[Number(r.key)] = Number(r.a);
  const sources = q.cells.length ? await q.sources() : null;
  return {
    total: fatal + injury + pdo, fatal, injury, propertyDamageOnly: pdo, fatalities,
    byYear: of('year').map((r) => [Number(r.key), Number(r.a), Number(r.b), Number(r.c), Number(r.d)]).sort(([a], [b]) => a - b)
      .map(([year, f, i, p, k]) => ({ year, fatal: f, injury: i, propertyDamageOnly: p, total: f + i + p, fatalities: k })),
    byMonth: byMonth.map((crashes, m) => ({ month: m + 1, name: MONTHS[m], crashes })),
    byHourOfWeek: byHour.map((crashes, h) => ({ hourOfWeek: h, dayOfWeek: DAYS[Math.floor(h / 24)], hour: h % 24, crashes })),
    byWeather: decoded(of('weather'), WEATHER),
    byLight: decoded(of('light'), LIGHT_CONDITION),
    byRoadClass: decoded(of('road'), FUNCTIONAL_SYSTEM),
    source: sources?.crashes.source ?? null,
    sample: sources?.crashes.sample ?? false,
  };
}
