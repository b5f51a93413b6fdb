import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import { clientAppOf, CLIENT_NAME_HEADER } from '../../subgraphs/platform/client-app.ts';
import type { Config } from '../../subgraphs/platform/config.ts';
import type { GatewayMetrics } from './metrics.ts';

/** Apps (client awareness) labelled by name in metrics, per deployment; the rest count as `(other)`. */
export const MAX_CLIENT_NAMES = 20;
export const OTHER_CLIENT = '(other)';
/** Requests that name no app. */
export const NO_CLIENT = '(none)';

/** Admits a name while the set holds fewer than ARGV[2]: 1 when it is (or now is) a member, 0 when the set is full. */
const ADMIT = `if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 1 end
if redis.call('SCARD', KEYS[1]) < tonumber(ARGV[2]) then redis.call('SADD', KEYS[1], ARGV[1]) return 1 end
return 0`;

/**
 * The `client_name` label: the first MAX_CLIENT_NAMES names seen keep their own label, shared across
 * processes in a Redis set when there is one. The set only grows, so a name admitted stays admitted,
 * and once it is full every name it holds is known here: no later name costs a round trip.
 */
export class ClientNames {
  private readonly known = new Set<string>();
  private full = false;
  private shared: { redis: Redis; key: string } | undefined;

  /** Counts names across the deployment's processes in `key` (REDIS_URL). */
  share(redis: Redis, key: string) { this.shared = { redis, key }; }

  /** The label of a request's apollographql-client-name (absent: `(none)`; malformed, or past the bound: `(other)`). */
  async label(header: string | undefined): Promise<string> {
    if (header === undefined) return NO_CLIENT;
    const { name } = clientAppOf({ [CLIENT_NAME_HEADER]: header });
    if (!name) return OTHER_CLIENT;
    if (this.known.has(name)) return name;
    if (this.full) return OTHER_CLIENT;
    if (!this.shared) return this.admitLocally(name);
    const { redis, key } = this.shared;
    // Redis down: counted as (other) rather than unbounded.
    const admitted = await redis.eval(ADMIT, 1, key, name, MAX_CLIENT_NAMES).catch(() => null);
    if (admitted === 1) this.known.add(name);
    if (admitted === 0) {
      for (const member of await redis.smembers(key).catch(() => [])) this.known.add(member);
      this.full = this.known.size >= MAX_CLIENT_NAMES;
    }
    return this.known.has(name) ? name : OTHER_CLIENT;
  }

  private admitLocally(name: string) {
    if (this.known.size >= MAX_CLIENT_NAMES) {
      this.full = true;
      return OTHER_CLIENT;
    }
    this.known.add(name);
    return name;
  }
}

/** Register after rateLimitPlugin: with Redis, the `client_name` names are counted across the deployment. */
export const clientNamesPlugin = fp(async (app: FastifyInstance, { metrics, config }: { metrics: GatewayMetrics; config: Config }) => {
  if (app.sharedCounters) metrics.clientNames.share(app.sharedCounters, `${config.REDIS_KEY_PREFIX}client-names`);
}, { name: 'client-names', dependencies: ['rate-limit'] });
