import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Database } from '../subgraphs/platform/db/orm.ts';
import type { Subgraph } from '../subgraphs/platform/subgraph.ts';

export interface HealthOptions {
  /** The gateway's own database. */
  db: Database;
  /** Whether each subgraph answers (supergraph.ts subgraphProbes). */
  probes: Record<string, () => Promise<boolean>>;
  localSubgraphs?: readonly Subgraph[];
}

/** Liveness (`/healthz`) and readiness (`/readyz`: the database, every subgraph, and why a local one is pending). */
async function health(app: FastifyInstance, { db, probes, localSubgraphs }: HealthOptions) {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const checks: Record<string, boolean> = { database: await db.orm.isConnected().catch(() => false) };
    await Promise.all(Object.entries(probes).map(async ([name, probe]) => { checks[name] = await probe(); }));
    const ready = Object.values(checks).every(Boolean);
    const pending = Object.fromEntries((localSubgraphs ?? []).flatMap((s) => {
      const why = s.pending();
      return why ? [[s.name, why]] : [];
    }));
    const status = ready ? 'ok' : 'unavailable';
    return reply.code(ready ? 200 : 503).send({ status, checks, ...(Object.keys(pending).length ? { pending } : {}) });
  });
}

/** Register on the root instance, outside the token gate: `await app.register(healthPlugin, { db, probes })`. */
export const healthPlugin = fp(health, { name: 'health' });
