import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Real cases of the shipped NHTSA FARS 2013-2015 extract, each found by a small buffer around its own
 * position with its real figures and decoded codes (on PGlite, or PostgreSQL with DATABASE_URL).
 */
const CASES = [
  { // Orland, Glenn County: a truck crossed the I-5 median into a bus of students.
    name: 'Orland bus crash 2014', STATE: 6, ST_CASE: 61044, YEAR: 2014, LATITUDE: 39.75661944, LONGITUD: -122.20536944, localDateTime: '2014-04-10T17:40',
    FATALS: 10, PERSONS: 49, VE_TOTAL: 3, PEDS: 0, DRUNK_DR: 0, WEATHERNAME: 'Clear', LGT_CONDNAME: 'Daylight', FUNC_SYS: 1, FUNC_SYSNAME: 'Interstate', RUR_URBNAME: 'Rural',
  },
  { // Yucaipa: a tour bus lost its brakes on SR-38.
    name: 'Yucaipa tour bus crash 2013', STATE: 6, ST_CASE: 62829, YEAR: 2013, LATITUDE: 34.08981667, LONGITUD: -117.03794167, localDateTime: '2013-02-03T18:30',
    FATALS: 8, PERSONS: 42, VE_TOTAL: 3, PEDS: 0, DRUNK_DR: 0, WEATHERNAME: 'Clear', LGT_CONDNAME: 'Dark - Not Lighted', FUNC_SYS: 3, FUNC_SYSNAME: 'Principal Arterial - Other', RUR_URBNAME: 'Rural',
  },
  { name: 'Chicago Loop, three pedestrians 2015', STATE: 17, ST_CASE: 170952, YEAR: 2015, LATITUDE: 41.88576667, LONGITUD: -87.62448889, localDateTime: '2015-06-02T17:00',
    FATALS: 1, PERSONS: 10, VE_TOTAL: 6, PEDS: 3, DRUNK_DR: 0, WEATHERNAME: 'Clear', LGT_CONDNAME: 'Daylight', FUNC_SYS: 3, FUNC_SYSNAME: 'Principal Arterial - Other', RUR_URBNAME: 'Urban',
  },
  { name: 'Chicago Loop, drinking driver at night 2015', STATE: 17, ST_CASE: 170690, YEAR: 2015, LATITUDE: 41.88674444, LONGITUD: -87.63013889, localDateTime: '2015-07-18T03:22',
    FATALS: 1, PERSONS: 3, VE_TOTAL: 3, PEDS: 0, DRUNK_DR: 1, WEATHERNAME: 'Clear', LGT_CONDNAME: 'Dark - Lighted', FUNC_SYS: 3, FUNC_SYSNAME: 'Principal Arterial - Other', RUR_URBNAME: 'Urban',
  },
  { name: 'Downtown Los Angeles 2013', STATE: 6, ST_CASE: 60340, YEAR: 2013, LATITUDE: 34.04982222, LONGITUD: -118.24905556, localDateTime: '2013-03-10T13:50',
    FATALS: 1, PERSONS: 2, VE_TOTAL: 1, PEDS: 5, DRUNK_DR: 0, WEATHERNAME: 'Clear', LGT_CONDNAME: 'Daylight', FUNC_SYS: 4, FUNC_SYSNAME: 'Minor Arterial', RUR_URBNAME: 'Urban',
  },
];

const RECORD = 'ST_CASE STATE YEAR MONTH DAY HOUR MINUTE localDateTime LATITUDE LONGITUD FATALS PERSONS VE_TOTAL PEDS DRUNK_DR WEATHER WEATHERNAME LGT_COND LGT_CONDNAME FUNC_SYS FUNC_SYSNAME RUR_URB RUR_URBNAME source';

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['risk'] });
  await riskDataLoaded(t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em);
}, 600_000);
afterAll(async () => { await t?.close(); });

describe('real FARS cases at their own positions', () => {
  for (const { name, ...expected } of CASES) {
    it(`${name}: ST_CASE ${expected.ST_CASE}, ${expected.FATALS} killed`, async () => {
      const res = await t.graphql(`query($w: WKT!) { riskIndex(wkt: $w, radius: 0.0005) {
        area { dataStatus } farsInfo { total source sample records { ${RECORD} } } accidentSummary { fatalities byYear { year fatalities } } } }`,
      { w: `POINT(${expected.LONGITUD} ${expected.LATITUDE})` }, null);
      expect(res.errors).toBeUndefined();
      const report = res.data.riskIndex;
      expect(report.area.dataStatus).toBe('READY');
      expect(report.farsInfo).toMatchObject({ source: 'NHTSA FARS 2013-2015', sample: false });
      const record = report.farsInfo.records.find((r: { ST_CASE: number; YEAR: number }) => r.ST_CASE === expected.ST_CASE && r.YEAR === expected.YEAR);
      expect(record).toMatchObject({ ...expected, source: 'FARS' });
      expect(report.accidentSummary.fatalities).toBeGreaterThanOrEqual(expected.FATALS);
      expect(report.accidentSummary.byYear.find((y: { year: number }) => y.year === expected.YEAR).fatalities).toBeGreaterThanOrEqual(expected.FATALS);
    });
  }

  it('the same case through REST /riskIndex/v1/farsInfo', async () => {
    const [orland] = CASES;
    const res = await t.request('GET', `/riskIndex/v1/farsInfo?${new URLSearchParams({ geometry: `POINT(${orland.LONGITUD} ${orland.LATITUDE})`, radius: '0.0005' })}`);
    expect(res.status).toBe(200);
    expect(res.body.farsInfo.records).toContainEqual(expect.objectContaining({ ST_CASE: 61044, YEAR: 2014, FATALS: 10, PERSONS: 49, FUNC_SYSNAME: 'Interstate' }));
  });
});
