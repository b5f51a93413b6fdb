import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daysAgo, TEST_RECORDS } from '../../subgraphs/scoring/mvr/sandbox-records.ts';
import { sandboxClient, startTestStack, type TestStack } from '../support/stack.ts';

const USERS = '/shared-mobility-insights/v2/users';

interface Row { id: string; score: number; reasons: string[] }

/** The rows of the "Test driving records" table of docs/sandbox.md: what the test checks. */
async function documentedRows(): Promise<Row[]> {
  const page = await readFile(new URL('../../docs/sandbox.md', import.meta.url), 'utf8');
  const section = page.split('## Test driving records')[1].split('\n## ')[0];
  return section.split('\n').filter((l) => l.startsWith('| `sbx_')).map((line) => {
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    const codes = cells[4] === 'none' ? [] : cells[4].split(',').map((c) => c.trim().replaceAll('`', ''));
    return { id: cells[0].replaceAll('`', ''), score: Number(cells[3]), reasons: codes };
  });
}

let t: TestStack;
let sandbox: string;

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['scoring'] });
  sandbox = (await sandboxClient(t, 'org-mvr')).token;
}, 300_000);
afterAll(async () => { await t?.close(); });

describe('the sandbox test driving records', () => {
  it('documents every record, and each scores as documented through REST', async () => {
    const rows = await documentedRows();
    expect(rows.map((r) => r.id).sort()).toEqual(Object.keys(TEST_RECORDS).sort());
    const dateOfBirth = daysAgo(new Date(), { years: 40 });
    for (const row of rows) {
      const body = { dateOfBirth, homeZip: '55401' };
      const user = await t.request('POST', USERS, { token: sandbox, body });
      expect(user.status).toBe(201);
      const path = `${USERS}/${user.body.userId as string}`;
      const intake = { token: sandbox, body: { testRecord: row.id } };
      const mvr = await t.request('POST', `${path}/sourcea-mvr`, intake);
      expect(mvr.status, JSON.stringify(mvr.body)).toBe(201);
      const scored = await t.request('GET', `${path}/prequal-coverage-score`, { token: sandbox });
      expect(scored.headers.get('x-sandbox')).toBe('true');
      expect({ id: row.id, score: scored.body.score, reasons: scored.body.reasonCodes }).toEqual(row);
    }
  });

  it('keeps each record\'s report stable for months: its dates are relative to the intake day', async () => {
    const user = await t.request('POST', USERS, { token: sandbox, body: {} });
    const path = `${USERS}/${user.body.userId as string}/sourcea-mvr`;
    const mvr = await t.request('POST', path, { token: sandbox, body: { testRecord: 'sbx_mvr_dui' } });
    const today = new Date();
    expect(mvr.body.summary.violations[0].date).toBe(daysAgo(today, { months: 18 }));
    expect(mvr.body.summary.license.firstIssueDate).toBe(daysAgo(today, { years: 20 }));
    expect(daysAgo(new Date('2028-03-31T12:00:00Z'), { months: 1 })).toBe('2028-02-29');
    const query = `mutation M($id: ID!) {
      createMvr(userId: $id, source: SOURCE_A, report: {testRecord: "sbx_mvr_dui"}) {
        summary { violations { acdCode } }
      }
    }`;
    const body = { query, variables: { id: user.body.userId } };
    const graphql = await t.request('POST', '/graphql', { token: sandbox, body });
    expect(graphql.body.data.createMvr.summary.violations).toEqual([{ acdCode: 'A21' }]);
  });

  it('refuses an unknown test record in a sandbox, and test records in a live organisation', async () => {
    const user = await t.request('POST', USERS, { token: sandbox, body: {} });
    const path = `${USERS}/${user.body.userId as string}/sourcea-mvr`;
    const unknown = await t.request('POST', path, { token: sandbox, body: { testRecord: 'sbx_nope' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toContain('sbx_mvr_clean');
    const live = await t.request('POST', USERS, { token: t.token, body: {} });
    const livePath = `${USERS}/${live.body.userId as string}/sourcea-mvr`;
    const liveIntake = { token: t.token, body: { testRecord: 'sbx_mvr_clean' } };
    const refused = await t.request('POST', livePath, liveIntake);
    expect(refused.status).toBe(400);
    expect(refused.body.reason ?? refused.body.extensions?.reason).toBe('LIGHT_MVR');
  });
});
