import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../platform/config.ts';
import { sendWebhook } from './send.ts';
import type { AttemptLogEntry } from './entities.ts';
import { holdsRow, type Run } from '../platform/db/run.ts';

export const DELIVERIES = '"webhooks"."webhook_deliveries"';
export const SUBSCRIPTIONS = '"webhooks"."webhook_subscriptions"';
/** Attempts kept in a delivery's log (a replayed delivery adds to it). */
const LOG_KEPT = 30;

/** The wait before retry n (1-based): base x 4^(n-1). */
export const retryDelayMs = (config: Pick<Config, 'WEBHOOK_RETRY_BASE_MS'>, attempt: number) => config.WEBHOOK_RETRY_BASE_MS * 4 ** (attempt - 1);

/** The schedule of a delivery that never succeeds: seconds after the event of each attempt. */
export function retrySchedule(config: Pick<Config, 'WEBHOOK_RETRY_BASE_MS' | 'WEBHOOK_MAX_ATTEMPTS'>): number[] {
  const at = [0];
  for (let n = 1; n < config.WEBHOOK_MAX_ATTEMPTS; n += 1) at.push(at[n - 1] + retryDelayMs(config, n) / 1000);
  return at;
}

export interface Claimed {
  id: string; org_id: string; subscription_id: string; url: string; secret: string;
  /** The secret a rotation replaced, while its overlap lasts (null after). */
  previous_secret: string | null;
  payload: string; attempts: number;
  attempt_log: AttemptLogEntry[] | string;
}

/** A delivery a worker may claim: pending, due, and not leased (a lapsed lease is a crashed worker's). */
const CLAIMABLE = `d.status = 'PENDING' and d.next_attempt_at <= now()
  and (d.locked_until is null or d.locked_until < now())`;

/**
 * Whether any delivery may be claimable: one probe of the due index. Every process's worker polls
 * every WEBHOOK_POLL_INTERVAL_MS, mostly to find nothing; the claim (planned anew each time) took
 * 6 ms on the embedded cluster at rest, up to 19 ms, and requests' statements waited for it.
 */
export const anyClaimable = (run: Run) => holdsRow(run, `${DELIVERIES} d where ${CLAIMABLE}`);

/**
 * Claims up to `limit` due deliveries with a lease (a crashed worker's claims come back when it
 * runs out), never one whose resource has an earlier delivery still pending, nor one of a paused
 * subscription (by the partner, or by the breaker). The bounds per subscription and per organisation count the deliveries every
 * process has in flight (the leased ones), so one organisation's slow receivers hold at most its
 * own share; a subscription past the breaker's threshold gets one attempt at a time (the probe).
 */
export async function claimDue(run: Run, config: Config, limit: number): Promise<Claimed[]> {
  const leaseMs = config.WEBHOOK_TIMEOUT_MS * 2 + 10_000;
  return await run(`with busy as (
      select subscription_id, org_id from ${DELIVERIES} where status = 'PENDING' and locked_until > now()),
    due as (
      select d.id, d.org_id, d.next_attempt_at, d.source_seq,
        row_number() over (partition by d.subscription_id order by d.next_attempt_at, d.source_seq)
          + (select count(*) from busy b where b.subscription_id = d.subscription_id) as sub_slot,
        case when s.consecutive_failures >= ? then 1 else ? end as sub_bound
      from ${DELIVERIES} d join ${SUBSCRIPTIONS} s on s.id = d.subscription_id
      where ${CLAIMABLE}
        and not s.paused and (s.paused_until is null or s.paused_until <= now())
        and not exists (select 1 from ${DELIVERIES} e where e.subscription_id = d.subscription_id and e.resource_key = d.resource_key
          and e.status = 'PENDING' and e.source_seq < d.source_seq)),
    fair as (
      select id, next_attempt_at, source_seq,
        row_number() over (partition by org_id order by next_attempt_at, source_seq)
          + (select count(*) from busy b where b.org_id = due.org_id) as org_slot
      from due where sub_slot <= sub_bound),
    picked as (
      select d.id from ${DELIVERIES} d join fair f on f.id = d.id
      where f.org_slot <= ? and d.status = 'PENDING' and (d.locked_until is null or d.locked_until < now())
      order by f.next_attempt_at, f.source_seq limit ? for update of d skip locked)
    update ${DELIVERIES} w set locked_until = now() + (? * interval '1 millisecond')
    from picked, ${SUBSCRIPTIONS} s where w.id = picked.id and s.id = w.subscription_id
    returning w.id, w.org_id, w.subscription_id, s.url, s.secret,
      case when s.previous_secret_until > now() then s.previous_secret end as previous_secret,
      w.payload, w.attempts, w.attempt_log`,
  [config.WEBHOOK_BREAKER_FAILURES, config.WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION, config.WEBHOOK_CONCURRENCY_PER_ORGANISATION, limit, leaseMs]) as unknown as Claimed[];
}

/**
 * Sends one claimed delivery and records the outcome, and the subscription's breaker: a success
 * closes it; each failure counts, and from the threshold on pauses the subscription for the
 * cool-down. An attempt abandoned because the worker stops records nothing and frees its claim.
 */
export async function attempt(run: Run, config: Config, log: FastifyBaseLogger, delivery: Claimed, signal: AbortSignal): Promise<void> {
  const secrets = [delivery.secret, ...(delivery.previous_secret ? [delivery.previous_secret] : [])];
  const result = await sendWebhook(delivery.url, secrets, delivery.id, delivery.payload, {
    timeoutMs: config.WEBHOOK_TIMEOUT_MS, maxResponseBytes: config.WEBHOOK_MAX_RESPONSE_BYTES, allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK, signal,
  });
  if (signal.aborted) {
    await run(`update ${DELIVERIES} set locked_until = null where id = ?`, [delivery.id]);
    return;
  }
  if (!result.ok) {
    log.info({ subscriptionId: delivery.subscription_id, deliveryId: delivery.id, status: result.status, error: result.error, detail: result.detail }, 'webhook attempt failed');
  }
  const attempts = delivery.attempts + 1;
  const previous = typeof delivery.attempt_log === 'string' ? JSON.parse(delivery.attempt_log) as AttemptLogEntry[] : delivery.attempt_log;
  const entries = [...previous, { at: new Date().toISOString(), status: result.status, error: result.error, durationMs: result.durationMs }].slice(-LOG_KEPT);
  const status = result.ok ? 'SUCCEEDED' : attempts >= config.WEBHOOK_MAX_ATTEMPTS ? 'FAILED' : 'PENDING';
  await run(`update ${DELIVERIES} set status = ?, attempts = ?, locked_until = null, last_attempt_at = now(), last_response_status = ?, last_error = ?,
      delivered_at = ${result.ok ? 'now()' : 'null'}, next_attempt_at = now() + (? * interval '1 millisecond'), attempt_log = ?::jsonb where id = ?`,
  [status, attempts, result.status, result.error, status === 'PENDING' ? retryDelayMs(config, attempts) : 0, JSON.stringify(entries), delivery.id]);
  if (result.ok) {
    await run(`update ${SUBSCRIPTIONS} set consecutive_failures = 0, paused_until = null where id = ? and consecutive_failures > 0`, [delivery.subscription_id]);
  } else {
    await run(`update ${SUBSCRIPTIONS} set consecutive_failures = consecutive_failures + 1,
        paused_until = case when consecutive_failures + 1 >= ? then now() + (? * interval '1 millisecond') else paused_until end where id = ?`,
    [config.WEBHOOK_BREAKER_FAILURES, config.WEBHOOK_BREAKER_COOLDOWN_MS, delivery.subscription_id]);
  }
}
