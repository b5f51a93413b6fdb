/**
 * recover's bound, against the webhooks subgraph's own database (PGlite, or PostgreSQL with
 * DATABASE_URL): at most 10,000 FAILED deliveries a call, oldest first, `more` while some remain, only
 * the subscription's and only since the instant; another organisation's subscription is NOT_FOUND.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { openDatabase, type Database } from '../../subgraphs/platform/db/orm.ts';
import { TENANT_FILTER } from '../../subgraphs/platform/db/tenant.ts';
import { webhooks } from '../../subgraphs/webhooks/index.ts';
import { MAX_RECOVERED, WebhookService } from '../../subgraphs/webhooks/service.ts';
import { testDatabase } from '../support/database.ts';

const ORG = 'org-recover';
let folder: string;
let db: Database;
let drop: () => Promise<void>;
const run = (sql: string, params: unknown[] = []) => db.orm.em.getConnection().execute(sql, params, 'all');
const serviceOf = (orgId: string) => {
  const em = db.orm.em.fork();
  em.setFilterParams(TENANT_FILTER, { orgId });
  return new WebhookService(em);
};

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'frg-recover-'));
  const database = await testDatabase(process.env.DATABASE_URL, 'recover');
  drop = database.drop;
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn', DATABASE_URL: undefined, ...database.env, DATA_DIR: folder });
  db = await openDatabase(config, {
    name: webhooks.name, entities: webhooks.entities, migrationsPath: webhooks.migrationsPath,
  });
}, 120_000);
afterAll(async () => {
  await db?.close();
  await drop?.();
  await rm(folder, { recursive: true, force: true });
});

/** `count` deliveries of `subscriptionId` in `status`, created from `ageSeconds` ago on, one millisecond apart. */
async function deliveries(subscriptionId: string, status: string, count: number, ageSeconds: number) {
  await run(`insert into webhooks.webhook_deliveries (id, org_id, subscription_id, event_id, event_type, resource_key,
      source_seq, payload, status, attempts, next_attempt_at, attempt_log, created_at)
    select gen_random_uuid(), ?, ?::uuid, gen_random_uuid(), 'rescue.status_changed', 'rescue:r' || n, n, '{}', ?, 9, now(),
      '[]'::jsonb, now() - (?::int * interval '1 second') + (n * interval '1 millisecond')
    from generate_series(1, ?::int) n`, [ORG, subscriptionId, status, ageSeconds, count]);
}

it('recovers at most 10,000 FAILED deliveries a call, oldest first, and says when more remain', async () => {
  const own = serviceOf(ORG);
  const { subscription } = await own.subscribe({ url: 'https://93.184.215.14/hooks', eventTypes: ['rescue.status_changed'] });
  const { subscription: bystander } = await own.subscribe({
    url: 'https://93.184.215.14/other', eventTypes: ['rescue.status_changed'],
  });
  // The database's clock before the inserts, which may take seconds on a busy machine.
  const [{ now }] = await run('select now() as now');
  const since = new Date(new Date(now as string).getTime() - 25_000);
  await deliveries(subscription.id, 'FAILED', MAX_RECOVERED + 5, 20);
  await deliveries(subscription.id, 'FAILED', 3, 300);
  await deliveries(subscription.id, 'SUCCEEDED', 7, 10);
  await deliveries(bystander.id, 'FAILED', 4, 10);
  // The 10,005 span from 20 s to 10 s before their insert, after `since`; the 3 are 300 s old; the others 10 s.

  expect(await serviceOf('org-else').recover(subscription.id, since).catch((e: { extensions: unknown }) => e.extensions))
    .toMatchObject({ code: 'NOT_FOUND' });
  expect(await serviceOf(ORG).recover(subscription.id, since)).toEqual({ recovered: MAX_RECOVERED, more: true });
  const [oldestLeft] = await run(`select min(created_at) as at, count(*) as n from webhooks.webhook_deliveries
    where subscription_id = ? and status = 'FAILED' and created_at >= ?`, [subscription.id, since.toISOString()]);
  expect(Number(oldestLeft.n)).toBe(5);
  const [newestRecovered] = await run(`select max(created_at) as at from webhooks.webhook_deliveries
    where subscription_id = ? and status = 'PENDING'`, [subscription.id]);
  expect(new Date(newestRecovered.at as string) < new Date(oldestLeft.at as string)).toBe(true);

  expect(await serviceOf(ORG).recover(subscription.id, since)).toEqual({ recovered: 5, more: false });
  expect(await serviceOf(ORG).recover(subscription.id, since)).toEqual({ recovered: 0, more: false });
  const states = await run(`select subscription_id, status, count(*) as n from webhooks.webhook_deliveries
    group by subscription_id, status order by subscription_id, status`);
  const count = (id: string, status: string) =>
    Number(states.find((s: Record<string, unknown>) => s.subscription_id === id && s.status === status)?.n ?? 0);
  // The 3 older than `since`, the SUCCEEDED ones and the other subscription's stay as they were.
  expect(count(subscription.id, 'FAILED')).toBe(3);
  expect(count(subscription.id, 'SUCCEEDED')).toBe(7);
  expect(count(subscription.id, 'PENDING')).toBe(MAX_RECOVERED + 5);
  expect(count(bystander.id, 'FAILED')).toBe(4);
  const [reset] = await run(`select max(attempts) as attempts from webhooks.webhook_deliveries where status = 'PENDING'`);
  expect(Number(reset.attempts)).toBe(0);
}, 180_000);
