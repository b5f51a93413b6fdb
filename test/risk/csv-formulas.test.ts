/**
 * What the Risk Index exports write for a spreadsheet: text a spreadsheet would run as a formula is
 * prefixed with `'` (OWASP CSV injection), numbers stay numbers; and the exports, which pick CSV or
 * GeoJSON from Accept, say `Vary: Accept` to shared caches.
 */
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const CHICAGO = 'POLYGON((-87.95 41.7, -87.68 41.7, -87.68 42.0, -87.95 42.0, -87.95 41.7))';
const CRASHES = `/riskIndex/v1/export/crashes?geometry=${encodeURIComponent(CHICAGO)}&limit=5000`;

/** What a poisoned ingest file could put in the FARS name columns, by the row's ST_CASE. */
const POISON: Record<number, { weather_name: string; light_condition_name: string; functional_system_name: string }> = {
  0: { weather_name: '=cmd|\' /C calc\'!A0', light_condition_name: '@SUM(1+1)*cmd|\' /C calc\'!A0', functional_system_name: '+1+cmd|\' /C calc\'!A0' },
  1: { weather_name: '-2+3+cmd|\' /C calc\'!A0', light_condition_name: '\t=1+1', functional_system_name: '\r=1+1' },
};

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['risk'] });
  const em = t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em;
  await riskDataLoaded(em);
  // Two copies of Chicago's most recent fatal crash (the same cells, so the export finds them; case
  // numbers 0 and 1 sort them first) with poisoned names.
  const [latest] = await em.getConnection().execute<{ id: string }[]>(`select "id" from "risk"."risk_crashes"
    where "severity" = 'fatal' and "latitude" between 41.75 and 41.95 and "longitude" between -87.9 and -87.7
    order by "year" desc, "month" desc, "day" desc, coalesce("hour", 99) desc limit 1`);
  for (const [caseNumber, names] of Object.entries(POISON)) {
    await em.getConnection().execute(`insert into "risk"."risk_crashes"
      select (jsonb_populate_record(null::"risk"."risk_crashes", to_jsonb(c) || ?::jsonb)).* from "risk"."risk_crashes" c where c."id" = ?`,
    [JSON.stringify({ id: `poisoned-${caseNumber}`, case_number: Number(caseNumber), ...names }), latest!.id]);
  }
}, 600_000);
afterAll(async () => { await t?.close(); });

describe('CSV exports', () => {
  it('prefix text that begins with =, +, -, @, tab or CR with \', and leave numbers (negative longitudes) as numbers', async () => {
    const res = await fetch(`${t.url}${CRASHES}`, { headers: { accept: 'text/csv' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const rows = parse(await res.text(), { columns: true, record_delimiter: '\r\n' }) as Record<string, string>[];
    for (const [caseNumber, names] of Object.entries(POISON)) {
      const row = rows.find((r) => r.ST_CASE === caseNumber);
      expect(row, `ST_CASE ${caseNumber}`).toBeDefined();
      expect(row!.WEATHERNAME).toBe(`'${names.weather_name}`);
      expect(row!.LGT_CONDNAME).toBe(`'${names.light_condition_name}`);
      expect(row!.FUNC_SYSNAME).toBe(`'${names.functional_system_name}`);
    }
    expect(rows.length).toBeGreaterThan(2);
    for (const row of rows) {
      expect(row.LONGITUD).toMatch(/^-\d+\.\d+$/);
      expect(Number(row.LATITUDE)).toBeGreaterThan(41);
      expect(row.ST_CASE).toMatch(/^\d+$/);
    }
    // Names that are not formulas are as they were.
    expect(rows.filter((r) => !(r.ST_CASE in POISON)).every((r) => !r.WEATHERNAME.startsWith('\''))).toBe(true);
  });
});

describe('Vary: Accept on the exports', () => {
  it('on every answer, a revalidation included, as the format follows Accept', async () => {
    const cells = `/riskIndex/v1/export/cells?geometry=${encodeURIComponent(CHICAGO)}`;
    const csv = await fetch(`${t.url}${cells}`, { headers: { accept: 'text/csv' } });
    const geojson = await fetch(`${t.url}${cells}`, { headers: { accept: 'application/geo+json' } });
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(geojson.headers.get('content-type')).toBe('application/geo+json');
    for (const res of [csv, geojson]) {
      expect(res.headers.get('cache-control')).toBe('public, max-age=300');
      expect(res.headers.get('vary')).toMatch(/\bAccept\b/i);
      await res.arrayBuffer();
    }
    const revalidated = await fetch(`${t.url}${cells}`, { headers: { accept: 'text/csv', 'if-none-match': csv.headers.get('etag')! } });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get('vary')).toMatch(/\bAccept\b/i);
  });
});
