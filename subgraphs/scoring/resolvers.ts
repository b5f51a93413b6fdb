import type { SubgraphContext } from '../platform/context.ts';
import { sandboxResetPart } from '../platform/db/sandbox-reset.ts';
import type { MvrRecord, User } from './entities.ts';
import type { ScoringLoaders } from './loaders.ts';
import { MvrService } from './mvr/service.ts';
import type { MvrSource } from './mvr/summary.ts';
import { PrequalService, type PrequalResult } from './prequal.ts';
import { UserService } from './service.ts';

type Ctx = SubgraphContext<ScoringLoaders>;
type UpdateMode = 'MERGE' | 'REPLACE';

const users = (ctx: Ctx) => new UserService(ctx.em);
const mvrs = (ctx: Ctx) => new MvrService(ctx.em);

/** The score of one user through the request's loaders (user and newest MVR: no N+1). */
async function prequalScore(userId: string, ctx: Ctx, known?: User): Promise<PrequalResult> {
  const [user, records] = await Promise.all([known ?? ctx.loaders.userById.load(userId), ctx.loaders.mvrRecordsByUser.load(userId)]);
  return new PrequalService(ctx.em).score(user, userId, records[0]);
}

const MISSING_LABELS: Record<string, string> = {
  dateOfBirth: 'dateOfBirth (add it with updateUser)',
  homeZip: 'homeZip (add it with updateUser)',
  mvr: 'a full MVR (add one with createMvr)',
};

export const resolvers = {
  SandboxReset: sandboxResetPart('scoring'),
  Query: {
    user: (_: unknown, { userId }: { userId: string }, ctx: Ctx) => ctx.loaders.userById.load(userId),
    prequalCoverageScore: (_: unknown, { userId }: { userId: string }, ctx: Ctx) => prequalScore(userId, ctx),
  },
  Mutation: {
    createUser: (_: unknown, { input }: { input?: Parameters<UserService['create']>[0] | null }, ctx: Ctx) => users(ctx).create(input ?? {}),
    updateUser: (_: unknown, a: { userId: string; input: { dateOfBirth?: string | null; homeZip?: string | null }; mode: UpdateMode }, ctx: Ctx) =>
      users(ctx).update(a.userId, a.input, a.mode),
    enrollUser: (_: unknown, a: { userId: string; status: string }, ctx: Ctx) => users(ctx).enroll(a.userId, a.status),
    createMvr: async (_: unknown, a: { userId: string; source: MvrSource; report?: unknown; reportJson?: string | null }, ctx: Ctx) => {
      const record = await mvrs(ctx).create(a.userId, a.source, { report: a.report, reportJson: a.reportJson });
      ctx.loaders.mvrRecordsByUser.clear(a.userId);
      return record;
    },
  },
  Booking: {
    __resolveReference: (ref: { bookingId: string; userId?: string }) => ref,
    user: (booking: { userId?: string }, _: unknown, ctx: Ctx) => (booking.userId ? ctx.loaders.userById.load(booking.userId) : null),
  },
  User: {
    __resolveReference: (ref: { userId: string }, ctx: Ctx) => ctx.loaders.userById.load(ref.userId),
    userID: (user: User) => user.userId,
    enrollmentStatus: (user: User) => user.enrollmentStatus.toUpperCase(),
    mvrRecords: (user: User, _: unknown, ctx: Ctx) => ctx.loaders.mvrRecordsByUser.load(user.userId),
    prequalCoverageScore: (user: User, _: unknown, ctx: Ctx) => prequalScore(user.userId, ctx, user),
  },
  MvrRecord: {
    report: (record: MvrRecord, _: unknown, ctx: Ctx) => mvrs(ctx).reportText(record),
    summary: (record: MvrRecord, _: unknown, ctx: Ctx) => mvrs(ctx).summary(record),
  },
  PrequalCoverageScoreResult: {
    __resolveType: (result: PrequalResult) => (result.kind === 'score' ? 'PrequalCoverageScore' : 'MissingUserData'),
  },
  PrequalCoverageScore: {
    mvrRecordId: (result: Extract<PrequalResult, { kind: 'score' }>) => result.mvrRecord.id,
  },
  MissingUserData: {
    message: (result: Extract<PrequalResult, { kind: 'missing' }>) =>
      `A coverage score needs ${result.missingFields.map((f) => MISSING_LABELS[f]).join(', ')}`,
  },
};
