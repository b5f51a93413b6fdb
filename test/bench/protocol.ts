/** Messages between the benchmark runner (run.ts) and its server process (server.ts). */

export interface BenchClient { id: string; secret: string; org: string }

/**
 * What the server process's environment adds to its parent's: NODE_ENV as deployed (the
 * Dockerfile's). Libraries read it when they load, before server.ts runs (graphql-js checks every
 * instanceof for a second copy of itself outside production).
 */
export const SERVER_ENV = { NODE_ENV: 'production' } as const;

export interface ServerStats {
  /** SQL statements run so far by each subgraph (since the last reset). */
  statements: Record<string, number>;
  /** CPU time of the server process since the last reset, in microseconds. */
  cpuMicros: number;
  /** Share of the time the server's event loop was busy since the last reset (0..1). */
  eventLoopUtilization: number;
  /** BENCH_PROFILE: the CPU profile file written for the measurement that just ended. */
  profile?: string;
}

export interface Targets {
  /** Each subgraph's own GraphQL URL (called directly, no gateway). */
  direct: Record<string, string>;
  /** Our gateway, subgraphs over loopback HTTP (SUBGRAPH_TRANSPORT=http). */
  gateway: string;
  /** Our gateway, subgraphs executed in-process (SUBGRAPH_TRANSPORT=inprocess). */
  gatewayInprocess: string;
  /** Stock ApolloServer + ApolloGateway on the same supergraph and subgraphs. */
  stock: string;
  /** Hive Gateway, Rust query planner, defaults (hive.ts): its origin, GraphQL at /graphql. */
  hive: string;
  /** The same with in-flight subgraph request de-duplication off. */
  hiveNodedup: string;
  /** Minimal Fastify + driver server doing the REST user lookup: the physical limit (bare.ts). */
  bare: string;
}

/**
 * `label` (on reset): names the CPU profile of the measurement that starts. `seed-mixed`: seeds the
 * `mixed` scenario's users, vehicles and bookings and registers `clients` API clients (one per connection).
 */
export type ServerMessage =
  | { type: 'reset' | 'read' | 'close'; id: number; label?: string }
  | { type: 'seed-mixed'; id: number; clients: number };

export interface MixedSeed { users: number; bookings: number; clients: Omit<BenchClient, 'org'>[] }

export type ServerReply =
  | { type: 'ready'; targets: Targets; subgraphs: string[]; broken: Record<string, string>; client: BenchClient; database: string }
  | { type: 'stats'; id: number; stats: ServerStats }
  | { type: 'seeded'; id: number; seed: MixedSeed }
  | { type: 'failed'; id: number; problem: string }
  | { type: 'closed'; id: number };
