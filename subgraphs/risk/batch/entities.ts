import { defineEntity, p } from '@mikro-orm/core';
import { tenantProperties } from '../../platform/db/tenant.ts';

export const BATCH_STATUSES = ['QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/**
 * A batch scoring job: its organisation's (the tenant filter keeps every read to it), its state and
 * progress, and the runner that holds it (`leaseUntil`: a runner that stops renewing it loses the job
 * to the next, which resumes after the last committed chunk).
 */
export const RiskBatchSchema = defineEntity({
  name: 'RiskBatch',
  tableName: 'risk_batches',
  indexes: [{ name: 'risk_batches_status_idx', properties: ['status', 'createdAt'] }],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    ...tenantProperties,
    clientId: p.string().length(128).index('risk_batches_client_idx'),
    status: p.enum(BATCH_STATUSES),
    total: p.integer(),
    processed: p.integer().default(0),
    failedRows: p.integer().default(0),
    /** Milliseconds the runners spent on its rows: the job's total budget is of this. */
    busyMs: p.bigint('number').default(0),
    error: p.string().length(500).nullable(),
    runner: p.string().length(64).nullable(),
    leaseUntil: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
    expiresAt: p.datetime().index('risk_batches_expires_idx'),
  },
});
export class RiskBatch extends RiskBatchSchema.class {}
RiskBatchSchema.setClass(RiskBatch);

/** One input row of a batch and, once scored, its result (`done`); read only through its batch. */
export const RiskBatchRowSchema = defineEntity({
  name: 'RiskBatchRow',
  tableName: 'risk_batch_rows',
  properties: {
    batchId: p.uuid().primary(),
    seq: p.integer().primary(),
    rowId: p.string().length(200),
    wkt: p.text().nullable(),
    radius: p.double().nullable(),
    done: p.boolean().default(false),
    riskIndex: p.double().nullable(),
    crashes: p.integer().nullable(),
    fatalities: p.integer().nullable(),
    areaKm2: p.double().nullable(),
    error: p.string().length(500).nullable(),
  },
});
export class RiskBatchRow extends RiskBatchRowSchema.class {}
RiskBatchRowSchema.setClass(RiskBatchRow);

export const batchEntities = [RiskBatch, RiskBatchRow];
