/**
 * The crash filter on its own (subgraphs/risk/filter/): parsing from GraphQL input and REST
 * parameters, its errors (the field and what it accepts), one key for every spelling, and the SQL and
 * in-memory tests agreeing on every stored crash (PGlite, or PostgreSQL with DATABASE_URL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppError } from '../../subgraphs/platform/errors.ts';
import { crashFilterSql, dayOfWeek, matchesCrashFilter, type FilteredFacts } from '../../subgraphs/risk/filter/apply.ts';
import {
  appliedFilter, crashFilterFromQuery, crashFilterKey, parseCrashFilter, splitList, type CrashFilter,
} from '../../subgraphs/risk/filter/crash-filter.ts';
import { checkFilterCost, filteredYears } from '../../subgraphs/risk/filter/filtered-cells.ts';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const fromQuery = (query: Record<string, string>) => crashFilterFromQuery((name) => query[name]);
const errorOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e as AppError;
  }
  throw new Error('no error');
};

describe('parsing', () => {
  it('normalises GraphQL input: lists sorted and unique, names as the summaries spell them; nothing given is no filter', () => {
    expect(parseCrashFilter({ years: [2015, 2013, 2015], lightConditions: ['dark - not LIGHTED', 'Daylight'], ruralUrban: 'URBAN', pedestrians: false }))
      .toEqual({ years: [2013, 2015], lightConditions: ['Daylight', 'Dark - Not Lighted'], ruralUrban: 'URBAN', pedestrians: false });
    expect(parseCrashFilter(null)).toBeNull();
    expect(parseCrashFilter({ years: null, drunkDriver: null })).toBeNull();
  });

  it('reads the REST parameters of the same names, lists comma-separated, a name\'s own commas kept', () => {
    expect(splitList('weather', 'Rain,Fog, Smog, Smoke,clear')).toEqual(['Rain', 'Fog, Smog, Smoke', 'clear']);
    const f = fromQuery({
      years: '2015, 2014', months: '12,1', daysOfWeek: '1,7', hours: '0,23', weather: 'Fog, Smog, Smoke,Rain', functionClasses: 'interstate',
      ruralUrban: 'rural', drunkDriver: 'TRUE', pedestrians: 'false', minFatalities: '2', unrelated: 'x',
    });
    expect(f).toEqual({
      years: [2014, 2015], months: [1, 12], daysOfWeek: [1, 7], hours: [0, 23], weather: ['Rain', 'Fog, Smog, Smoke'], functionClasses: ['Interstate'],
      ruralUrban: 'RURAL', drunkDriver: true, pedestrians: false, minFatalities: 2,
    });
    expect(fromQuery({ years: '', hours: '  ' })).toBeNull();
  });

  it('gives one key for every spelling, and says which filter was applied', () => {
    const a = fromQuery({ hours: '3,1,2', lightConditions: 'DAYLIGHT' });
    const b = parseCrashFilter({ lightConditions: ['Daylight'], hours: [2, 1, 3, 3] });
    expect(crashFilterKey(a)).toBe(crashFilterKey(b));
    expect(crashFilterKey(a)).toBe('hours=1,2,3&lightConditions=Daylight');
    expect(crashFilterKey(null)).toBe('');
    // The key read back as query parameters is the same filter.
    expect(fromQuery(Object.fromEntries(new URLSearchParams(crashFilterKey(a))))).toEqual(a);
    expect(appliedFilter(a)).toMatchObject({ key: crashFilterKey(a), hours: [1, 2, 3], lightConditions: ['Daylight'], years: null, minFatalities: null });
    expect(appliedFilter(null)).toBeNull();
  });

  it.each([
    [{ years: [1900] }, 'filter.years', /whole numbers from 1975 to 2100; got 1900/],
    [{ months: [13] }, 'filter.months', /from 1 to 12/],
    [{ daysOfWeek: [0] }, 'filter.daysOfWeek', /from 1 to 7/],
    [{ hours: [24] }, 'filter.hours', /from 0 to 23/],
    [{ hours: [] }, 'filter.hours', /at least one/],
    [{ weather: ['Sunny'] }, 'filter.weather', /names among .*"Clear".*"Rain"/],
    [{ lightConditions: ['Night'] }, 'filter.lightConditions', /"Dark - Not Lighted"/],
    [{ functionClasses: ['Highway'] }, 'filter.functionClasses', /"Interstate"/],
    [{ ruralUrban: 'SUBURBAN' }, 'filter.ruralUrban', /RURAL or URBAN/],
    [{ minFatalities: 0 }, 'filter.minFatalities', /from 1 to 100/],
  ])('refuses %j as BAD_USER_INPUT naming %s and what it accepts', (input, field, message) => {
    const e = errorOf(() => parseCrashFilter(input));
    expect(e.code).toBe('BAD_USER_INPUT');
    expect(e.extensions).toMatchObject({ field });
    expect(e.extensions.accepted).toBeDefined();
    expect(e.message).toMatch(message);
  });

  it('names the REST parameter (no prefix) for REST input', () => {
    expect(errorOf(() => fromQuery({ years: '2015,abc' })).extensions).toMatchObject({ field: 'years' });
    expect(errorOf(() => fromQuery({ drunkDriver: 'yes' })).message).toMatch(/drunkDriver takes true or false; got "yes"/);
    expect(errorOf(() => fromQuery({ hours: '1.5' })).extensions).toMatchObject({ field: 'hours' });
  });

  it('bounds the crash rows a filtered evaluation reads before it reads any, and its per-year span', () => {
    expect(() => checkFilterCost([{ fatal: 5, injury: 0, pdo: 0 }], 5)).not.toThrow();
    expect(errorOf(() => checkFilterCost([{ fatal: 5, injury: 1, pdo: 0 }], 5)).extensions).toMatchObject({ code: 'GEOMETRY_TOO_COMPLEX', limit: 'crashes', max: 5, got: 6 });
    const model = { years: 3, firstYear: 2013, lastYear: 2015 };
    expect(filteredYears(model, null)).toBe(3);
    expect(filteredYears(model, { years: [2015, 2020] })).toBe(1);
    expect(filteredYears(model, { months: [1] })).toBe(3);
  });
});

describe('the SQL and the in-memory test agree on every stored crash', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack({ subgraphs: ['risk'] });
    await riskDataLoaded(t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em);
  }, 600_000);
  afterAll(async () => { await t?.close(); });

  const FILTERS: CrashFilter[] = [
    { years: [2015] }, { months: [2, 7] }, { daysOfWeek: [1] }, { daysOfWeek: [6, 7] }, { hours: [0, 1, 2, 3] },
    parseCrashFilter({ lightConditions: ['Dark - Not Lighted'], weather: ['Rain', 'Fog, Smog, Smoke'] })!,
    parseCrashFilter({ functionClasses: ['Interstate', 'Local'] })!, { ruralUrban: 'RURAL' }, { ruralUrban: 'URBAN' },
    { drunkDriver: true }, { drunkDriver: false }, { pedestrians: true }, { pedestrians: false }, { minFatalities: 3 },
    { years: [2013, 2014], hours: [22, 23], drunkDriver: true, ruralUrban: 'URBAN' },
  ];

  it('for each of several filters', async () => {
    const em = t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em.fork();
    const crashes: (FilteredFacts & { id: string })[] = await em.getConnection().execute(`select "id", "year", "month", "day", "hour",
      "light_condition" as "lightCondition", "weather", "functional_system" as "functionalSystem", "rural_urban" as "ruralUrban",
      "drunk_drivers" as "drunkDrivers", "peds", "fatalities" from "risk"."risk_crashes"`);
    expect(crashes.length).toBe(11_297);
    for (const filter of FILTERS) {
      const where = crashFilterSql(filter);
      const rows: { id: string }[] = await em.getConnection().execute(`select "id" from "risk"."risk_crashes" where true${where.sql}`, where.params);
      const expected = crashes.filter((c) => matchesCrashFilter(filter, c)).map((c) => c.id).sort();
      expect(rows.map((r) => r.id).sort(), JSON.stringify(filter)).toEqual(expected);
      expect(expected.length, JSON.stringify(filter)).toBeGreaterThan(0);
    }
    expect(dayOfWeek(2015, 11, 1)).toBe(1);
  });
});
