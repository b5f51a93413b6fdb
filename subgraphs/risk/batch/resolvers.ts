import { requireScope, type Caller } from '../../platform/auth/tokens.ts';
import type { SubgraphContext } from '../../platform/context.ts';
import type { RiskBatch } from './entities.ts';
import { parseBatchInput, type BatchInputFormat } from './input.ts';
import { renderBatchResult } from './result.ts';
import { cancelBatch, findBatch, resultRows, submitBatch } from './store.ts';

/** The Risk Index is public, its batch jobs an organisation's: a token with `b2b` (no subgraph guard applies). */
function b2b(ctx: SubgraphContext): Caller {
  if (ctx.authError) throw ctx.authError;
  return requireScope(ctx.caller, 'b2b');
}

/** Batch scoring's fields (merged into the risk subgraph's resolvers). */
type Ctx = SubgraphContext;

export const batchResolvers = {
  Query: {
    riskBatch: (_: unknown, a: { id: string }, ctx: SubgraphContext) => {
      b2b(ctx);
      return findBatch(ctx.em, a.id);
    },
  },
  Mutation: {
    submitRiskBatch: (_: unknown, a: { input: { format: BatchInputFormat; content: string } }, ctx: Ctx) => {
      const caller = b2b(ctx);
      // Parsed and checked (size, rows, header) before anything is written.
      return submitBatch(ctx.em, caller, parseBatchInput(a.input.format, a.input.content));
    },
    cancelRiskBatch: (_: unknown, a: { id: string }, ctx: SubgraphContext) => {
      b2b(ctx);
      return cancelBatch(ctx.em, a.id);
    },
  },
  RiskBatch: {
    progress: (b: RiskBatch) => (b.total ? Math.round((b.processed / b.total) * 10_000) / 10_000 : 1),
    result: async (b: RiskBatch, a: { format: 'GEOJSON' | 'CSV' }, ctx: Ctx) => {
      const format = a.format === 'CSV' ? 'csv' : 'geojson';
      return renderBatchResult(await resultRows(ctx.em, b), format, b.status, b.error ?? null, b.id);
    },
  },
};
