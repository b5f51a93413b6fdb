import { ApolloServer } from '@apollo/server';
import type { EntityManager } from '@mikro-orm/core';
import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import { createContext, type SubgraphContext } from '../../subgraphs/platform/context.ts';

const em = { fork: () => ({ setFilterParams: () => undefined }) } as unknown as EntityManager;

describe('subgraph request context', () => {
  it('makes its loaders and logger on first use only, also through Apollo Server (which copies the context of every request)', async () => {
    const createLoaders = vi.fn(() => ({ made: true }));
    const logger = vi.fn(() => ({ child: 'logger' }) as unknown as FastifyBaseLogger);
    const verify = async () => ({ clientId: 'c', orgId: 'o', scopes: [] });
    const server = new ApolloServer<SubgraphContext>({
      typeDefs: 'type Query { plain: String, withLoaders: Boolean, logged: Boolean }',
      resolvers: {
        Query: {
          plain: () => 'no loader, no log line',
          withLoaders: (_: unknown, __: unknown, ctx: SubgraphContext) => Boolean(ctx.loaders) && Boolean(ctx.loaders),
          logged: (_: unknown, __: unknown, ctx: SubgraphContext) => Boolean(ctx.log),
        },
      },
    });
    await server.start();
    const run = async (query: string) => {
      const contextValue = await createContext({ em, verify, createLoaders }, 'Bearer a.b.c', 'req-1', logger);
      const response = await server.executeOperation({ query }, { contextValue });
      return response.body.kind === 'single' ? response.body.singleResult : null;
    };
    expect((await run('{ plain }'))?.data).toEqual({ plain: 'no loader, no log line' });
    expect(createLoaders).not.toHaveBeenCalled();
    expect(logger).not.toHaveBeenCalled();
    expect((await run('{ withLoaders }'))?.data).toEqual({ withLoaders: true });
    expect(createLoaders).toHaveBeenCalledTimes(1);
    expect((await run('{ logged }'))?.data).toEqual({ logged: true });
    expect(logger).toHaveBeenCalledTimes(1);
    await server.stop();
  });
});
