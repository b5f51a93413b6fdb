import { defineEntity, p } from '@mikro-orm/core';
import { tenantProperties } from '../platform/db/tenant.ts';

export const ENROLLMENT_STATUSES = ['accepted', 'pending', 'rejected'] as const;
export type EnrollmentStatus = (typeof ENROLLMENT_STATUSES)[number];

export const UserSchema = defineEntity({
  name: 'User',
  tableName: 'users',
  uniques: [{ properties: ['orgId', 'userId'], name: 'users_org_user_unique' }],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    ...tenantProperties,
    userId: p.string().length(255),
    dateOfBirth: p.string().length(10).nullable(),
    homeZip: p.string().length(10).nullable(),
    enrollmentStatus: p.enum(ENROLLMENT_STATUSES).default('pending'),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export class User extends UserSchema.class {}
UserSchema.setClass(User);

export const MVR_RECORD_SOURCES = ['SOURCE_A', 'SOURCE_B'] as const;

/**
 * One MVR as a partner sent it, never updated. The report text is stored only encrypted
 * (AES-256-GCM, see mvr/crypto.ts); nothing derived from it is kept in clear. `seq` orders the
 * records of a user by creation, so "the latest" is exact even within one millisecond.
 */
export const MvrRecordSchema = defineEntity({
  name: 'MvrRecord',
  tableName: 'mvr_records',
  indexes: [{ properties: ['orgId', 'userId', 'seq'], name: 'mvr_records_user_seq_idx' }],
  properties: {
    id: p.uuid().primary(),
    ...tenantProperties,
    userId: p.string().length(255),
    source: p.enum(MVR_RECORD_SOURCES),
    seq: p.bigint('number').autoincrement(),
    reportCiphertext: p.blob(),
    keyId: p.string().length(32),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export class MvrRecord extends MvrRecordSchema.class {}
MvrRecordSchema.setClass(MvrRecord);
