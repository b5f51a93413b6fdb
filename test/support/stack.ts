import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, subgraphUrlVariable, type Config } from '../../subgraphs/platform/config.ts';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { buildStack, type Stack, type StackTuning } from '../../gateway/stack.ts';
import type { Scope } from '../../subgraphs/platform/auth/tokens.ts';
import { testDatabase } from './database.ts';
import { gatewayClient, type Request } from './http.ts';

export type { HttpResult, RequestOptions } from './http.ts';

export interface TestStack {
  url: string;
  stack: Stack;
  config: Config;
  /** A token for the default organisation's client (all scopes). */
  token: string;
  /** The default organisation (DEFAULT_CLIENT.org here; a shared stack gives each file its own) and its client. */
  org: string;
  client: { id: string; secret: string };
  /** A new client in `org` and a token for it. */
  clientFor(org: string, scopes?: Scope[]): Promise<{ clientId: string; clientSecret: string; token: string }>;
  request: Request;
  /** POST /graphql; `token` defaults to the default organisation's. */
  graphql<T = any>(query: string, variables?: Record<string, unknown>, token?: string | null): Promise<{ status: number; data?: T; errors?: { message: string; extensions?: Record<string, unknown>; path?: unknown[] }[] }>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** REST responses checked against /openapi.json so far, and those that broke it (close() also fails on any). */
  contract: { checked: number; violations: string[] };
  /** Stops the whole stack and starts it again on the same data (PGlite on disk needs `persistent`); `url` changes. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** The internal hop key of test stacks (a subgraph left out stands at an unreachable <NAME>_URL, which needs one). */
export const TEST_HOP_KEY = 'test-internal-hop-key-0123456789abcdef';

export const DEFAULT_CLIENT = { id: 'test-client', secret: 'test-secret-0123456789abcdef', org: 'org-a' };

/**
 * Boots the real gateway (on an ephemeral loopback port) and subgraphs (in-process unless
 * SUBGRAPH_TRANSPORT=http) against a fresh database.
 * `subgraphs` limits which subgraphs start (the others answer as unreachable), for speed;
 * `persistent` keeps PGlite's data on disk (under the stack's DATA_DIR) so that it survives restart();
 * `tuning` shortens the gateway's internal delays;
 * `label` starts the names of its data folder and PostgreSQL database (see shared-stack.ts).
 */
export async function startTestStack(
  options: {
    subgraphs?: string[]; env?: Record<string, string>; persistent?: boolean; tuning?: StackTuning; label?: string;
  } = {},
): Promise<TestStack> {
  const dataDir = await mkdtemp(join(tmpdir(), `${options.label ?? 'frg-test'}-`));
  const database = await testDatabase(process.env.DATABASE_URL, options.label);
  const unreachable = Object.fromEntries(Object.keys(subgraphDefinitions)
    .filter((name) => options.subgraphs && !options.subgraphs.includes(name))
    .map((name) => [subgraphUrlVariable(name), 'http://127.0.0.1:9/graphql']));
  const env = {
    ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'warn', DATA_DIR: dataDir, DATABASE_URL: undefined,
    RATE_LIMIT_PER_MINUTE: '1000000', TOKEN_RATE_LIMIT_PER_MINUTE: '1000000', TOKEN_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000', INTERNAL_HOP_KEY: TEST_HOP_KEY,
    // Load shedding off: test files share the machine's cores, and test/gateway/overload.test.ts turns it on.
    OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
    BOOTSTRAP_CLIENT_ID: DEFAULT_CLIENT.id, BOOTSTRAP_CLIENT_SECRET: DEFAULT_CLIENT.secret, BOOTSTRAP_ORG: DEFAULT_CLIENT.org,
    ...database.env, ...(options.persistent ? { PGLITE_IN_MEMORY: 'false' } : {}), ...unreachable, ...options.env,
  };
  const config = loadConfig(env);
  let stack = await buildStack(config, env, options.tuning);
  let address = await stack.gateway.app.listen({ host: '127.0.0.1', port: 0 });

  const { calls, checkContract } = await clientCalls(() => address, () => stack, DEFAULT_CLIENT, (org) => org);
  return {
    ...calls,
    get url() { return address; },
    get stack() { return stack; },
    config,
    async restart() {
      await stack.close();
      stack = await buildStack(config, env, options.tuning);
      address = await stack.gateway.app.listen({ host: '127.0.0.1', port: 0 });
    },
    async close() {
      await stack.close();
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
      checkContract();
    },
  };
}

/**
 * What a test does as `own` (a client of organisation `own.org`) on the stack at `address()`: its
 * token, its requests (checked against /openapi.json) and the clients it adds, in the organisation
 * `orgOf(name)` names.
 */
export async function clientCalls(
  address: () => string, stack: () => Stack,
  own: { id: string; secret: string; org: string }, orgOf: (name: string) => string,
) {
  const { request, tokenFor, contract } = gatewayClient(address);
  const token = await tokenFor(own.id, own.secret);
  const calls: Pick<TestStack, 'token' | 'org' | 'client' | 'clientFor' | 'request' | 'graphql' | 'contract'> = {
    token, org: own.org, client: { id: own.id, secret: own.secret }, contract, request,
    async clientFor(org, scopes = ['b2b', 'roadside']) {
      const created = await stack().gateway.clients.create(orgOf(org), scopes);
      return { clientId: created.clientId, clientSecret: created.clientSecret, token: await tokenFor(created.clientId, created.clientSecret) };
    },
    async graphql(query, variables, tok) {
      const res = await request('POST', '/graphql', { body: { query, variables }, token: tok === undefined ? token : tok });
      return { status: res.status, ...(res.body as object) };
    },
  };
  return {
    calls,
    /** Throws when a REST response so far broke /openapi.json. */
    checkContract() {
      const { violations } = contract;
      if (violations.length) throw new Error(`REST responses that do not match /openapi.json:\n${[...new Set(violations)].slice(0, 20).join('\n')}`);
    },
  };
}

/**
 * An admin-scoped token for the stack's own client (`t.client`, which may ask for the admin scope:
 * it does not get it unasked). Throws when the token endpoint refuses.
 */
export async function adminToken(t: Pick<TestStack, 'request' | 'client'>): Promise<string> {
  const res = await t.request('POST', '/platform/oauth/v1/token', {
    form: { grant_type: 'client_credentials', client_id: t.client.id, client_secret: t.client.secret, scope: 'admin' },
  });
  if (res.status !== 200) throw new Error(`admin token request failed: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { access_token: string }).access_token;
}

/**
 * A new sandbox client of `organisation` (its sandbox organisation is `<organisation>-sandbox`),
 * made through the admin API with `admin` (an admin token; one is asked for when left out), and a token for it.
 */
export async function sandboxClient(t: Pick<TestStack, 'request' | 'client'>, organisation: string, admin?: string) {
  const created = await t.request('POST', '/platform/admin/v1/clients', { token: admin ?? await adminToken(t), body: { organisation, sandbox: true } });
  if (created.status !== 201) throw new Error(`sandbox client not created: ${created.status} ${JSON.stringify(created.body)}`);
  const { clientId, clientSecret } = created.body as { clientId: string; clientSecret: string };
  const token = await t.request('POST', '/platform/oauth/v1/token', { form: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret } });
  if (token.status !== 200) throw new Error(`sandbox client's token refused: ${token.status} ${JSON.stringify(token.body)}`);
  return { ...created.body, token: token.body.access_token as string } as { clientId: string; organisation: string; liveOrganisation: string; token: string };
}
