import type { SubgraphContext } from '../platform/context.ts';
import type { User } from './entities.ts';
import type { ScoringLoaders } from './loaders.ts';
import { UserService } from './service.ts';

type Ctx = SubgraphContext<ScoringLoaders>;
type UpdateMode = 'MERGE' | 'REPLACE';

const users = (ctx: Ctx) => new UserService(ctx.em);

export const resolvers = {
  Query: {
    user: (_: unknown, { userId }: { userId: string }, ctx: Ctx) => ctx.loaders.userById.load(userId),
  },
  Mutation: {
    createUser: (_: unknown, { input }: { input?: Parameters<UserService['create']>[0] | null }, ctx: Ctx) => users(ctx).create(input ?? {}),
    updateUser: (_: unknown, a: { userId: string; input: { dateOfBirth?: string | null; homeZip?: string | null }; mode: UpdateMode }, ctx: Ctx) =>
      users(ctx).update(a.userId, a.input, a.mode),
    enrollUser: (_: unknown, a: { userId: string; status: string }, ctx: Ctx) => users(ctx).enroll(a.userId, a.status),
  },
  User: {
    __resolveReference: (ref: { userId: string }, ctx: Ctx) => ctx.loaders.userById.load(ref.userId),
    userID: (user: User) => user.userId,
    enrollmentStatus: (user: User) => user.enrollmentStatus.toUpperCase(),
  },
};
