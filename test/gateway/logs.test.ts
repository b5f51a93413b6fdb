import { afterAll, beforeAll, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../support/child-server.ts';

const CLIENT = { id: 'log-client', secret: 'log-secret-Zq8XvN2pL5mR7tW9' };
const DOB = '1961-07-23';
const MVR_MARKER = 'MVR-SECRET-LICENSE-X7731942';
const PASSWORD = 'pw-Hq4VtY8cL2';
let server: ChildServer;

beforeAll(async () => {
  // Subgraphs over HTTP (opt-in): their own request lines are logged too, and must carry the gateway's request id.
  server = await startChildServer({ LOG_LEVEL: 'debug', SUBGRAPH_TRANSPORT: 'http', BOOTSTRAP_CLIENT_ID: CLIENT.id, BOOTSTRAP_CLIENT_SECRET: CLIENT.secret });
}, 300_000);
afterAll(async () => { await server?.stop(); });

/**
 * A full run at debug level: token, user with a date of birth, an MVR, a score, GraphQL reads, some
 * bad requests. The captured logs must carry request ids and none of the sensitive values sent.
 */
it('logs carry request ids and never dates of birth, MVR contents, tokens or secrets', async () => {
  const post = (path: string, body: unknown, token?: string, type = 'application/json') => fetch(`${server.base}${path}`, {
    method: 'POST',
    headers: { 'content-type': type, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const tokenRes = await post('/platform/oauth/v1/token', `grant_type=client_credentials&client_id=${CLIENT.id}&client_secret=${CLIENT.secret}`, undefined, 'application/x-www-form-urlencoded');
  const { access_token: token } = await tokenRes.json() as { access_token: string };
  const smi = '/shared-mobility-insights/v2';
  expect((await post(`${smi}/users`, { userId: 'log-user', dateOfBirth: DOB, homeZip: '60601' }, token)).status).toBe(201);
  const mvr = {
    id: 'mvr_log', object: 'motor_vehicle_report', report_type: 'full', full_name: 'Dana Reyes', license_number: MVR_MARKER,
    license_state: 'CA', license_status: 'VALID', license_class: 'C', issued_date: '2021-04-02', first_issued_date: '2009-07-15',
    expiration_date: '2030-04-02', restrictions: [], endorsements: [], violations: [], accidents: [], suspensions: [], created_at: '2026-10-02T17:04:11Z',
  };
  expect((await post(`${smi}/users/log-user/sourcea-mvr`, mvr, token)).status).toBe(201);
  expect((await fetch(`${server.base}${smi}/users/log-user/prequal-coverage-score`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  const asApp = { 'apollographql-client-name': 'fleet-web', 'apollographql-client-version': '2.3.1' };
  await fetch(`${server.base}/graphql`, {
    method: 'POST', body: JSON.stringify({ query: '{ user(userId: "log-user") { dateOfBirth mvrRecords { report } } }' }),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...asApp },
  });
  await post(`${smi}/users`, { userId: 'log-bad', dateOfBirth: '1961-02-30' }, token);
  await post(`${smi}/users/log-user/sourcea-mvr`, '{"license_number": "' + MVR_MARKER + '", broken', token);
  await post('/platform/oauth/v1/token', `grant_type=client_credentials&client_id=${CLIENT.id}&client_secret=wrong-${CLIENT.secret}`, undefined, 'application/x-www-form-urlencoded');
  await fetch(`${server.base}${smi}/users/log-user`, { headers: { authorization: `Bearer ${token}x` } });
  // Credentials in query strings: refused by the token endpoints, and masked in every logged URL.
  const inQuery = await post(`/services/roadside/v1/oauth/accesstoken?grant_type=client_credentials&client_id=${CLIENT.id}&client_secret=${CLIENT.secret}`, 'scope=roadside', undefined, 'application/x-www-form-urlencoded');
  expect(inQuery.status).toBe(400);
  expect(((await inQuery.json()) as { error: string }).error).toBe('invalid_request');
  expect((await fetch(`${server.base}${smi}/users/log-user?access_token=${token}&password=${PASSWORD}&api_key=${PASSWORD}k&keep=visible-param`)).status).toBe(401);

  await new Promise((r) => setTimeout(r, 300));
  const logs = server.stdout() + server.stderr();
  const lines = logs.split('\n').filter((l) => l.startsWith('{'));
  expect(lines.length).toBeGreaterThan(20);
  for (const secret of [DOB, MVR_MARKER, CLIENT.secret, token, token.split('.')[2], 'Dana Reyes', PASSWORD]) {
    expect(logs.includes(secret), `logs contain ${secret.slice(0, 12)}…`).toBe(false);
  }
  const requestLines = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.req || l.res);
  const urls = requestLines.map((l) => (l.req as { url?: string } | undefined)?.url ?? '');
  expect(urls).toContain(`${smi}/users/log-user?access_token=[redacted]&password=[redacted]&api_key=[redacted]&keep=visible-param`);
  expect(urls).toContain(`/services/roadside/v1/oauth/accesstoken?grant_type=client_credentials&client_id=${CLIENT.id}&client_secret=[redacted]`);
  expect(requestLines.length).toBeGreaterThan(10);
  // The app a request names (Apollo Client's client awareness) is on its line.
  const asAppLine = requestLines.find((l) => l.service === 'gateway' && (l.req as { clientName?: string }).clientName);
  expect(asAppLine?.req).toMatchObject({ method: 'POST', url: '/graphql', clientName: 'fleet-web', clientVersion: '2.3.1' });
  for (const line of requestLines) expect(typeof line.reqId).toBe('string');
  // the gateway's request id follows the request into the subgraphs
  const gatewayIds = new Set(requestLines.filter((l) => l.service === 'gateway').map((l) => l.reqId));
  const subgraphIds = requestLines.filter((l) => String(l.service).startsWith('subgraph-')).map((l) => l.reqId);
  expect(subgraphIds.length).toBeGreaterThan(0);
  expect(subgraphIds.every((id) => gatewayIds.has(id))).toBe(true);
  console.log(`logs: ${lines.length} lines scanned, ${requestLines.length} request lines, 0 sensitive values found`);
}, 120_000);

it('redactUrl masks the values of credential-like query parameters and keeps the rest', async () => {
  const { redactUrl } = await import('../../subgraphs/platform/log.ts');
  expect(redactUrl('/a/b')).toBe('/a/b');
  expect(redactUrl('/a?x=1&y=2')).toBe('/a?x=1&y=2');
  expect(redactUrl('/t?client_secret=s&access_token=t&refresh_token=r&token=k&password=p&secret=q&code=c&api_key=a&apiKey=b&grant_type=client_credentials'))
    .toBe('/t?client_secret=[redacted]&access_token=[redacted]&refresh_token=[redacted]&token=[redacted]&password=[redacted]&secret=[redacted]&code=[redacted]&api_key=[redacted]&apiKey=[redacted]&grant_type=client_credentials');
  // Encoded names are recognised; a name without a value has nothing to mask.
  expect(redactUrl('/t?client%5Fsecret=s&password&Client_Secret=S')).toBe('/t?client%5Fsecret=[redacted]&password&Client_Secret=[redacted]');
});
