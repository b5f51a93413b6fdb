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
