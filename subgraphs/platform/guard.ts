import type { GraphQLFieldResolver } from 'graphql';
import { requireScope, type Scope } from './auth/tokens.ts';
import type { SubgraphContext } from './context.ts';

type Resolver = GraphQLFieldResolver<unknown, SubgraphContext>;
export type ResolverMap = Record<string, Record<string, unknown> | unknown>;

/**
 * Puts the subgraph's scope check in front of every entry point (root fields and entity
 * references), so no resolver can forget it. Fields reached from those entry points are covered.
 */
export function guardResolvers(resolvers: ResolverMap, scope: Scope | null): ResolverMap {
  if (!scope) return resolvers;
  const guard = (fn: Resolver): Resolver => (parent, args, ctx, info) => {
    if (ctx.authError) throw ctx.authError;
    requireScope(ctx.caller, scope);
    return fn(parent, args, ctx, info);
  };
  const guardRef = (fn: (ref: unknown, ctx: SubgraphContext, info: unknown) => unknown) =>
    (ref: unknown, ctx: SubgraphContext, info: unknown) => {
      if (ctx.authError) throw ctx.authError;
      requireScope(ctx.caller, scope);
      return fn(ref, ctx, info);
    };
  return Object.fromEntries(Object.entries(resolvers).map(([type, fields]) => {
    if (typeof fields !== 'object' || fields === null || !('constructor' in fields) || fields.constructor !== Object) return [type, fields];
    const entries = Object.entries(fields as Record<string, unknown>).map(([name, fn]) => {
      if (typeof fn !== 'function') return [name, fn];
      if (type === 'Query' || type === 'Mutation') return [name, guard(fn as Resolver)];
      if (name === '__resolveReference') return [name, guardRef(fn as never)];
      return [name, fn];
    });
    return [type, Object.fromEntries(entries)];
  }));
}
