/** What the subscription benchmarks share: gateways as child processes, their clients, rescues, reports and subscribers. */
import { randomBytes } from 'node:crypto';
import { exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import { startChildServer, untilReady, type ChildServer } from '../support/child-server.ts';
import { gatewayClient } from '../support/http.ts';
import { wsClient } from '../support/subscriptions.ts';
import { subscriptionsHeld, untilHeld } from '../support/subscriptions-held.ts';
import { dispatch, provision, session } from '../roadside/helpers.ts';

export const OPERATOR = { id: 'bench-operator', secret: 'bench-operator-secret-0123456789' };
const RESCUE_UPDATED = 'subscription Track($reqId: ID!) { rescueUpdated(reqId: $reqId) { id status etaMinutes updatedAt } }';
const REPORT = 'mutation Report($reqId: ID!, $lat: Float!) { updateRescueStatus(input: { reqId: $reqId, status: EN_ROUTE, latitude: $lat, longitude: -87.636 }) { status } }';

/** What every gateway of a run shares: the bootstrap client, request limits out of the way, the same signing keys. */
export async function baseEnv(subscriptionsPerClient: number): Promise<Record<string, string>> {
  const pair = await generateKeyPair('EdDSA', { extractable: true });
  return {
    LOG_LEVEL: 'error', BOOTSTRAP_CLIENT_ID: OPERATOR.id, BOOTSTRAP_CLIENT_SECRET: OPERATOR.secret, BOOTSTRAP_ORG: 'org-bench',
    RATE_LIMIT_PER_MINUTE: '100000000', TOKEN_RATE_LIMIT_PER_MINUTE: '1000000', TOKEN_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000',
    SUBSCRIPTIONS_MAX_PER_CLIENT: String(subscriptionsPerClient), SUBSCRIPTIONS_MAX_PER_PROCESS: String(subscriptionsPerClient),
    JWT_PRIVATE_KEY: await exportPKCS8(pair.privateKey), JWT_PUBLIC_KEY: await exportSPKI(pair.publicKey),
    MVR_ENCRYPTION_KEY: randomBytes(32).toString('base64'), INTERNAL_HOP_KEY: randomBytes(32).toString('base64url'),
  };
}

/**
 * `step` again while the gateway sheds load (503: a busy, shared machine, with OVERLOAD_* on), for
 * up to a minute: the setup of a measurement, never what is measured.
 */
export async function retrying<T>(step: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (attempt >= 60 || !/\b503\b/.test((error as Error).message)) throw error;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
}

export interface Gateway { server: ChildServer; request: ReturnType<typeof gatewayClient>['request']; token: string; tokenFor(id: string, secret: string): Promise<string> }

/** A gateway on `env`; `cwd`: run another checkout's (an earlier revision's) instead of this one. */
export async function gateway(env: Record<string, string>, cwd?: string): Promise<Gateway> {
  const server = await startChildServer(env, { cwd });
  // A first start's data load in the background would be counted in every figure taken meanwhile.
  await untilReady(server.base, 120_000);
  const { request, tokenFor } = gatewayClient(() => server.base);
  const retried = (id: string, secret: string) => retrying(() => tokenFor(id, secret));
  return { server, request, tokenFor: retried, token: await retried(OPERATOR.id, OPERATOR.secret) };
}

/** A new API client of `organisation` (the operator's admin API) and a token for it. */
export async function clientOf(g: Gateway, organisation: string, scopes = ['b2b', 'roadside']): Promise<string> {
  const form = { grant_type: 'client_credentials', client_id: OPERATOR.id, client_secret: OPERATOR.secret, scope: 'admin' };
  const admin = await retrying(() => succeeded(g.request('POST', '/platform/oauth/v1/token', { form })));
  const token = (admin.body as { access_token: string }).access_token;
  const res = await retrying(() => succeeded(g.request('POST', '/platform/admin/v1/clients', { token, body: { organisation, scopes } })));
  if (res.status !== 201) throw new Error(`client: ${res.status} ${JSON.stringify(res.body)}`);
  const { clientId, clientSecret } = res.body as { clientId: string; clientSecret: string };
  return g.tokenFor(clientId, clientSecret);
}

/** A dispatched rescue, booked through `g`. */
export const rescue = (g: Gateway): Promise<string> => retrying(async () => {
  const member = await provision(g, g.token);
  const res = await dispatch(g, g.token, await session(g, g.token, [{ key: 'vin', value: member.vin }]));
  if (res.status >= 300) throw new Error(`dispatch: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { requestId: string }).requestId;
});

/** The answer, else an error naming its status (which `retrying` reads). */
export async function succeeded<T extends { status: number; body: unknown }>(answer: Promise<T>): Promise<T> {
  const res = await answer;
  if (res.status >= 300) throw new Error(`${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  return res;
}

/** One position report (an EN_ROUTE again): one committed rescue.updated event. */
export async function report(g: Gateway, reqId: string, i: number) {
  const body = { query: REPORT, variables: { reqId, lat: 41.88 + (i % 100) / 10_000 } };
  const res = await retrying(() => succeeded(g.request('POST', '/graphql', { token: g.token, body })));
  if ((res.body as { errors?: unknown }).errors) throw new Error(`report: ${JSON.stringify(res.body)}`);
}

export const until = async (done: () => boolean, what: string, timeoutMs = 30_000) => {
  const started = Date.now();
  while (!done()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
};

/** One subscriber on its own WebSocket: the arrival time of each result, and how to let it go. */
export interface Arrivals { at: number[]; updatedAt: string[]; stop(): Promise<void> }

function subscribe(g: Gateway, reqId: string, token: string): Arrivals {
  const arrivals: Arrivals = { at: [], updatedAt: [], stop: async () => {} };
  const open = (attempt: number) => {
    const connection = wsClient(g.server.base, `Bearer ${token}`);
    const unsubscribe = connection.client.subscribe<{ rescueUpdated: { updatedAt: string } }>({ query: RESCUE_UPDATED, variables: { reqId } }, {
      next: ({ data }) => { arrivals.at.push(Date.now()); arrivals.updatedAt.push(data!.rescueUpdated.updatedAt); },
      error: (error) => {
        const { code, reason } = error as { code?: number; reason?: string };
        const why = reason ?? (error as Error).message ?? JSON.stringify(error);
        // The upgrade refused by load shedding (503, a busy machine): opening is the setup, not what is measured.
        if (/\b503\b/.test(why) && attempt < 60) return void setTimeout(() => open(attempt + 1), 1_000);
        throw new Error(`subscription ended: ${code ?? ''} ${why}`);
      },
      complete: () => {},
    });
    arrivals.stop = async () => { unsubscribe(); await connection.dispose(); };
  };
  open(1);
  return arrivals;
}

/** `count` subscribers (as `token`, else the operator), opened `batch` at a time; resolves once the gateway holds them all. */
export async function subscribeMany(g: Gateway, reqId: string, count: number, token = g.token, batch = 100): Promise<Arrivals[]> {
  const held = await subscriptionsHeld(g.server.base);
  const all: Arrivals[] = [];
  for (let i = 0; i < count; i += batch) {
    all.push(...Array.from({ length: Math.min(batch, count - i) }, () => subscribe(g, reqId, token)));
    await untilHeld(g.server.base, held + all.length, 60_000);
  }
  return all;
}
