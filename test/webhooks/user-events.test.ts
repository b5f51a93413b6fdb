/**
 * user.updated and score.changed: recorded with each change of a user's data (and of the score it
 * moves), not when nothing changed or the change is refused, delivered to the subscriptions that
 * asked for them, never carrying a date of birth.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { sourceAFull } from '../scoring/mvr-fixtures.ts';
import { expectDocumentedPayloads } from './payload-schema.ts';
import { startReceiver, waitFor, type Received } from './receiver.ts';

const WH = '/platform/webhooks/v1';
const SMI = '/shared-mobility-insights/v2';
const DOB = '1969-07-21';
const NEW_DOB = '1971-03-02';

let t: TestStack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let secret: string;

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['scoring', 'webhooks'], env: { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_POLL_INTERVAL_MS: '50' } });
  receiver = await startReceiver();
  const both = await t.request('POST', `${WH}/subscriptions`, { token: t.token, body: { url: `${receiver.url}/users`, eventTypes: ['user.updated', 'score.changed', 'mvr.created'] } });
  expect(both.status).toBe(201);
  secret = both.body.secret;
  const scores = await t.request('POST', `${WH}/subscriptions`, { token: t.token, body: { url: `${receiver.url}/scores`, eventTypes: ['score.changed'] } });
  expect(scores.status).toBe(201);
}, 300_000);
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

async function ok(method: string, path: string, body?: unknown) {
  const res = await t.request(method, path, { token: t.token, body });
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
}

async function addMvr(userId: string) {
  const res = await t.request('POST', `${SMI}/users/${userId}/sourcea-mvr`, { token: t.token, body: JSON.stringify(sourceAFull()), headers: { 'content-type': 'application/json' } });
  expect(res.status).toBe(201);
}

/** The events of `userId` that reached `path`, once `last` has (each is delivered after those before it). */
async function eventsOf(userId: string, path: string, last: (r: Received) => boolean) {
  const mine = () => receiver.received.filter((r) => r.path === path && r.json.data.resource.userId === userId);
  await waitFor(() => mine().some(last), 5_000, `the last event of ${userId} at ${path}`);
  return mine();
}

it('user.updated follows each change of a user\'s data, as GET /users/{userId} returns it without the date of birth', async () => {
  await ok('POST', `${SMI}/users`, { userId: 'u-1', dateOfBirth: DOB, homeZip: '60601' });
  await ok('PATCH', `${SMI}/users/u-1`, { homeZip: '60602' });
  const zip = await ok('GET', `${SMI}/users/u-1`);
  await ok('PATCH', `${SMI}/users/u-1`, { homeZip: '60602' });
  expect((await t.request('PATCH', `${SMI}/users/u-1`, { token: t.token, body: { homeZip: 'nope' } })).status).toBe(400);
  await ok('PUT', `${SMI}/users/u-1/enrollment`, { enrollmentStatus: 'accepted' });
  await ok('PUT', `${SMI}/users/u-1/enrollment`, { enrollmentStatus: 'ACCEPTED' });
  await ok('PATCH', `${SMI}/users/u-1`, { dateOfBirth: NEW_DOB });
  const last = await ok('GET', `${SMI}/users/u-1`);

  const hits = await eventsOf('u-1', '/users', (r) => r.json.data.resource.changedFields.includes('dateOfBirth'));
  expect(hits.map((h) => [h.json.type, h.json.data.resource.changedFields])).toEqual([
    ['user.updated', ['homeZip']], ['user.updated', ['enrollmentStatus']], ['user.updated', ['dateOfBirth']],
  ]);
  const withoutDob = ({ dateOfBirth: _, ...rest }: Record<string, unknown>) => rest;
  expect(hits[0].json.data).toEqual({ path: `${SMI}/users/u-1`, resource: { ...withoutDob(zip), changedFields: ['homeZip'] } });
  expect(hits[2].json.data.resource).toEqual({ ...withoutDob(last), changedFields: ['dateOfBirth'] });
  for (const hit of hits) {
    expect(receiver.verify(secret, hit)).toBeTruthy();
    for (const dob of [DOB, NEW_DOB]) expect(hit.body).not.toContain(dob);
  }
});

it('score.changed follows a change that moves the score (value, reasons, or whether there is one), with the score as REST returns it', async () => {
  await ok('POST', `${SMI}/users`, { userId: 's-1', dateOfBirth: DOB, homeZip: '60601' });
  await ok('PATCH', `${SMI}/users/s-1`, { homeZip: '60602' }); // no MVR: no score before or after
  await addMvr('s-1');
  const first = await ok('GET', `${SMI}/users/s-1/prequal-coverage-score`);
  await addMvr('s-1'); // the same report again: the same score
  await ok('PATCH', `${SMI}/users/s-1`, { homeZip: '60603' }); // the same territory: the same score
  await ok('PUT', `${SMI}/users/s-1/enrollment`, { enrollmentStatus: 'rejected' }); // never affects the score
  await ok('PATCH', `${SMI}/users/s-1`, { homeZip: '50010' });
  const rural = await ok('GET', `${SMI}/users/s-1/prequal-coverage-score`);
  expect(rural.score).not.toBe(first.score);
  await ok('PUT', `${SMI}/users/s-1`, { dateOfBirth: DOB }); // REPLACE without homeZip: no score any more

  const scores = await eventsOf('s-1', '/scores', (r) => r.json.data.resource.score === null);
  expect(scores.map((h) => [h.json.data.resource.score, h.json.data.resource.previousScore])).toEqual([
    [first.score, null], [rural.score, first.score], [null, rural.score],
  ]);
  expect(scores[0].json.data).toEqual({ path: `${SMI}/users/s-1/prequal-coverage-score`, resource: { ...first, previousScore: null } });
  expect(scores[1].json.data.resource).toEqual({ ...rural, previousScore: first.score });
  expect(scores[2].json.data.resource).toEqual({ userId: 's-1', score: null, missingFields: ['homeZip'], previousScore: rural.score });

  const all = await eventsOf('s-1', '/users', (r) => r.json.type === 'score.changed' && r.json.data.resource.score === null);
  expect(all.map((h) => h.json.type)).toEqual([
    'user.updated', 'mvr.created', 'score.changed', 'mvr.created', 'user.updated', 'user.updated', 'user.updated', 'score.changed', 'user.updated', 'score.changed',
  ]);
  for (const hit of all) expect(hit.body).not.toContain(DOB);
});

it('a refused change records nothing: an MVR that is not a full report', async () => {
  await ok('POST', `${SMI}/users`, { userId: 'r-1', dateOfBirth: DOB, homeZip: '60601' });
  const light = await t.request('POST', `${SMI}/users/r-1/sourcea-mvr`, {
    token: t.token, body: JSON.stringify({ id: 'mvr_x', object: 'motor_vehicle_report', report_type: 'light', result: 'clear' }), headers: { 'content-type': 'application/json' },
  });
  expect(light.status).toBe(400);
  await addMvr('r-1');
  const hits = await eventsOf('r-1', '/users', (r) => r.json.type === 'score.changed');
  expect(hits.map((h) => [h.json.type, h.json.data.resource.previousScore])).toEqual([['mvr.created', undefined], ['score.changed', null]]);
});

it('a change whose transaction rolls back records nothing: neither the change nor its events', async () => {
  await ok('POST', `${SMI}/users`, { userId: 'rb-1', dateOfBirth: DOB, homeZip: '60601' });
  await addMvr('rb-1');
  await eventsOf('rb-1', '/users', (r) => r.json.type === 'score.changed');
  // The outbox refuses this user's rows from here on, so the transaction fails after the change was written.
  const scoring = t.stack.subgraphs.find((s) => s.name === 'scoring')!.db.orm.em.getConnection();
  await scoring.execute(`create function "scoring"."refuse_rb1"() returns trigger language plpgsql as $$
    begin if new.resource_key = 'user:rb-1' then raise exception 'refused by the test'; end if; return new; end $$`);
  await scoring.execute('create trigger "refuse_rb1" before insert on "scoring"."webhook_outbox" for each row execute function "scoring"."refuse_rb1"()');
  try {
    const failed = await t.graphql('mutation { updateUser(userId: "rb-1", input: { homeZip: "50010" }) { homeZip } }');
    expect(failed.errors?.length).toBe(1);
  } finally {
    await scoring.execute('drop trigger "refuse_rb1" on "scoring"."webhook_outbox"');
    await scoring.execute('drop function "scoring"."refuse_rb1"()');
  }
  expect((await ok('GET', `${SMI}/users/rb-1`)).homeZip).toBe('60601');
  await ok('PUT', `${SMI}/users/rb-1/enrollment`, { enrollmentStatus: 'accepted' });
  const hits = await eventsOf('rb-1', '/users', (r) => r.json.type === 'user.updated');
  expect(hits.map((h) => [h.json.type, h.json.data.resource.changedFields])).toEqual([
    ['mvr.created', undefined], ['score.changed', undefined], ['user.updated', ['enrollmentStatus']],
  ]);
});

it('every delivery keeps to the OpenAPI document\'s webhooks schema of its type (Ajv, JSON Schema 2020-12)', async () => {
  await expectDocumentedPayloads(t, receiver.received, ['user.updated', 'score.changed', 'mvr.created']);
});
