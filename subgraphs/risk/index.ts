import type { SubgraphDefinition } from '../platform/subgraph.ts';
import { ideExamples } from './ide-examples.ts';
import { startRiskDataLoad } from './data/load.ts';
import { prepareRiskData } from './data/prepare.ts';
import { preparedRiskDataReady } from './data/prepared.ts';
import { riskDataLoaded, riskDataStatus } from './data/status.ts';
import { riskEntities } from './entities.ts';
import { mapViewPages } from './map-page/index.ts';
import { ogcPages } from './ogc/index.ts';
import { startBatchRunner } from './batch/runner.ts';
import { RISK_BATCHES_PATH } from './batch/rest.ts';
import { closeAreaPool, createAreaPool, registerAreaPool } from './geometry/pool.ts';
import { resolvers } from './resolvers.ts';
import { RISK_MAP_EXAMPLE, RISK_PREFIX, riskRoutes } from './rest.ts';
import { createAnswerCache, registerAnswerCache, riskAnswers } from './services/answer-cache.ts';

/** Risk Index (area E): public (no token), reference data only (no orgId); batch jobs (batch/) are an organisation's, with a b2b token. */
export const risk: SubgraphDefinition<Record<string, never>> = {
  name: 'risk',
  typeDefs: new URL('./risk.graphql', import.meta.url),
  resolvers,
  entities: riskEntities,
  migrationsPath: new URL('./migrations', import.meta.url).pathname,
  scope: null,
  createLoaders: () => ({}),
  rest: riskRoutes,
  restIntro: `Risk Index map of Chicago's Loop: [${RISK_MAP_EXAMPLE}](${RISK_MAP_EXAMPLE}).`,
  pages: (kit) => async (app) => {
    await mapViewPages(kit)(app);
    await ogcPages()(app);
  },
  examples: ideExamples,
  // An evaluation takes well under a second: a refused caller may retry soon.
  inFlight: { field: 'riskIndex', label: 'Risk Index', max: (config) => config.RISK_MAX_IN_FLIGHT, retryAfterSeconds: 1, restPrefix: RISK_PREFIX, restExempt: [RISK_BATCHES_PATH] },
  // On the embedded database a first start copies in the data prepared at install time before it
  // answers. Otherwise (PostgreSQL, or no prepared data) it loads the shipped FARS crashes and builds
  // the aggregates in the background: the service answers meanwhile (area.dataStatus LOADING, /readyz
  // 503). Later starts find them stored.
  onStart: async (db, config, log) => {
    registerAreaPool(db.orm.em, createAreaPool(config, log));
    registerAnswerCache(db.orm.em, createAnswerCache(config.RISK_ANSWER_CACHE_MB * 1024 * 1024));
    const embedded = !config.DATABASE_URL;
    const load = startRiskDataLoad(db.orm.em.fork(), log, embedded ? { prepared: true } : { lock: true });
    if (embedded && await preparedRiskDataReady()) await load;
  },
  pending: (db) => (riskDataStatus(db.orm.em) === 'loading' ? 'the Risk Index data (NHTSA FARS crashes and aggregates) are loading' : null),
  answers: (db) => riskAnswers(db.orm.em),
  prepare: () => prepareRiskData(),
  // Batch scoring jobs (batch/): run here beside the interactive evaluations, in threads of their own.
  worker: startBatchRunner,
  onClose: async (db) => {
    await riskDataLoaded(db.orm.em);
    await closeAreaPool(db.orm.em);
  },
};
