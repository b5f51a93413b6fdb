/**
 * The webhooks subgraph's side of the event path, against its own database (PGlite, or PostgreSQL
 * with DATABASE_URL): the history records an event once however often it comes, pruning deletes
 * what is older than the retention (one process at a time), and an event becomes one delivery per
 * matching subscription of its organisation, once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { openDatabase, type Database } from '../../subgraphs/platform/db/orm.ts';
import type { CommittedEvent } from '../../subgraphs/platform/events/bus.ts';
import { webhooks } from '../../subgraphs/webhooks/index.ts';
import type { Run } from '../../subgraphs/platform/db/run.ts';
import { enqueueDeliveries } from '../../subgraphs/webhooks/enqueue.ts';
import { EVENTS, recordHistory } from '../../subgraphs/webhooks/history.ts';
import { prune, PRUNE_LOCK } from '../../subgraphs/webhooks/prune.ts';
import { testDatabase } from '../support/database.ts';

let folder: string;
let db: Database;
let drop: () => Promise<void>;
let databaseUrl: string | undefined;
let run: Run;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'frg-history-'));
  const database = await testDatabase(process.env.DATABASE_URL, 'history');
  drop = database.drop;
  databaseUrl = database.env.DATABASE_URL;
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn', DATABASE_URL: undefined, ...database.env, DATA_DIR: folder });
  db = await openDatabase(config, { name: webhooks.name, entities: webhooks.entities, migrationsPath: webhooks.migrationsPath });
  run = (sql, params = []) => db.orm.em.getConnection().execute(sql, params, 'all');
}, 120_000);
afterAll(async () => {
  await db?.close();
  await drop?.();
  await rm(folder, { recursive: true, force: true });
});

let seq = 0;
const event = (over: Partial<CommittedEvent> = {}): CommittedEvent => ({
  eventId: crypto.randomUUID(), source: 'roadside', seq: (seq += 1), orgId: 'org-h', type: 'rescue.status_changed',
  resourceKey: 'rescue:r1', resourcePath: '/services/roadside/v1/rescue/reqId/r1', resource: { requestId: 'r1', status: 'EN-ROUTE' },
  occurredAt: new Date().toISOString(), ...over,
});
const historyOf = (orgId: string) => run(`select id, source, seq, org_id, type, resource_key, resource_path, resource, occurred_at from ${EVENTS}
  where org_id = ? order by seq`, [orgId]);

describe('event history', () => {
  it('records every field of an event once, however often the event comes', async () => {
    const first = event({ orgId: 'org-once' });
    const second = event({ orgId: 'org-once', type: 'rescue.cancelled', resource: { requestId: 'r1', status: 'CANCELLED', note: 'a "quoted" ü' } });
    for (const e of [first, second, first, second, first]) await recordHistory(run, e);
    const rows = await historyOf('org-once');
    expect(rows.map((r) => ({
      eventId: r.id, source: r.source, seq: Number(r.seq), orgId: r.org_id, type: r.type, resourceKey: r.resource_key,
      resourcePath: r.resource_path, resource: typeof r.resource === 'string' ? JSON.parse(r.resource) : r.resource,
      occurredAt: new Date(r.occurred_at as string).toISOString(),
    }))).toEqual([first, second]);
  });

  it('prunes what is older than the retention and keeps the rest', async () => {
    const day = 86_400_000;
    const old = event({ orgId: 'org-prune', occurredAt: new Date(Date.now() - 31 * day).toISOString() });
    const recent = event({ orgId: 'org-prune', occurredAt: new Date(Date.now() - 29 * day).toISOString() });
    for (const e of [old, recent]) await recordHistory(run, e);
    expect(await prune(db, 30)).toBe(true);
    expect((await historyOf('org-prune')).map((r) => r.id)).toEqual([recent.eventId]);
    expect(await prune(db, 1)).toBe(true);
    expect(await historyOf('org-prune')).toEqual([]);
  });

  it('prunes in one process at a time: a round that finds another pruning skips', async () => {
    if (!databaseUrl) {
      // The embedded database has one owner and one connection: a round always gets the lock.
      expect(await prune(db, 30)).toBe(true);
      return;
    }
    const other = new pg.Client({ connectionString: databaseUrl });
    await other.connect();
    try {
      const old = event({ orgId: 'org-locked', occurredAt: new Date(Date.now() - 40 * 86_400_000).toISOString() });
      await recordHistory(run, old);
      // Another process's round holds the pruning lock in its transaction.
      await other.query('begin');
      const { rows: [held] } = await other.query<{ ok: boolean }>('select pg_try_advisory_xact_lock($1) as ok', [PRUNE_LOCK]);
      expect(held.ok).toBe(true);
      expect(await prune(db, 30)).toBe(false);
      expect((await historyOf('org-locked')).map((r) => r.id)).toEqual([old.eventId]);
      await other.query('commit');
      expect(await prune(db, 30)).toBe(true);
      expect(await historyOf('org-locked')).toEqual([]);
    } finally {
      await other.end();
    }
  });
});

describe('deliveries from events', () => {
  const subscribe = async (orgId: string, eventTypes: string[]) => {
    const id = crypto.randomUUID();
    await run(`insert into "webhooks"."webhook_subscriptions" (id, org_id, url, event_types, secret, created_at)
      values (?, ?, 'https://receiver.example/hook', ?::jsonb, 'whsec_x', now())`, [id, orgId, JSON.stringify(eventTypes)]);
    return id;
  };
  const deliveriesOf = (eventId: string) => run(`select subscription_id, org_id, event_type, resource_key, source_seq, payload, status, attempts
    from "webhooks"."webhook_deliveries" where event_id = ? order by subscription_id`, [eventId]);

  it('one pending delivery per subscription of the organisation that asked for the type, once per event', async () => {
    const both = await subscribe('org-d', ['rescue.status_changed', 'rescue.cancelled']);
    const cancelOnly = await subscribe('org-d', ['rescue.cancelled']);
    const changed = await subscribe('org-d', ['rescue.status_changed']);
    await subscribe('org-other', ['rescue.status_changed']);
    const e = event({ orgId: 'org-d', resource: { requestId: 'r9', status: 'EN-ROUTE' } });
    expect(await enqueueDeliveries(run, e)).toBe(2);
    expect(await enqueueDeliveries(run, e)).toBe(0);
    const rows = await deliveriesOf(e.eventId);
    expect(rows.map((r) => r.subscription_id).sort()).toEqual([both, changed].sort());
    expect(rows.map((r) => r.subscription_id)).not.toContain(cancelOnly);
    for (const row of rows) {
      expect(row).toMatchObject({ org_id: 'org-d', event_type: 'rescue.status_changed', resource_key: 'roadside:rescue:r1', status: 'PENDING', attempts: 0 });
      expect(Number(row.source_seq)).toBe(e.seq);
      expect(JSON.parse(row.payload as string)).toEqual({
        id: e.eventId, type: e.type, timestamp: e.occurredAt, data: { path: e.resourcePath, resource: e.resource },
      });
    }
    expect(await enqueueDeliveries(run, event({ orgId: 'org-none' }))).toBe(0);
  });
});
