/**
 * Two gateway processes on one PostgreSQL database (gateway B with WORKERS=2): three simulated sandbox
 * providers poll, and each sandbox rescue still makes each move once (one provider for the deployment).
 * Without DATABASE_URL it uses the machine's PostgreSQL (its own database, dropped after).
 */
import { randomBytes } from 'node:crypto';
import { exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_MOVES } from '../../subgraphs/roadside/sandbox/provider.ts';
import { startChildServer, type ChildServer } from '../support/child-server.ts';
import { testDatabase } from '../support/database.ts';
import { gatewayClient } from '../support/http.ts';
import { adminToken } from '../support/stack.ts';
import { dispatch, provision, session } from '../roadside/helpers.ts';

const POSTGRES = process.env.DATABASE_URL ?? process.env.CI_DATABASE_URL
  ?? 'postgres://root@127.0.0.1:5432/test';
const OPERATOR = { id: 'operator', secret: 'operator-secret-0123456789' };
const STEP_MS = 200;
const RESCUES = 4;

let database: Awaited<ReturnType<typeof testDatabase>>;
let servers: ChildServer[] = [];

beforeAll(async () => {
  database = await testDatabase(POSTGRES, 'sbxprov');
  const pair = await generateKeyPair('EdDSA', { extractable: true });
  const internal = await generateKeyPair('EdDSA', { extractable: true });
  const env = {
    ...database.env, PGLITE_IN_MEMORY: 'false', LOG_LEVEL: 'warn', SANDBOX_RESCUE_STEP_MS: String(STEP_MS),
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: `frg-test-${randomBytes(6).toString('hex')}:`,
    JWT_PRIVATE_KEY: await exportPKCS8(pair.privateKey), JWT_PUBLIC_KEY: await exportSPKI(pair.publicKey),
    INTERNAL_TOKEN_PRIVATE_KEY: await exportPKCS8(internal.privateKey),
    INTERNAL_TOKEN_PUBLIC_KEY: await exportSPKI(internal.publicKey),
    MVR_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    INTERNAL_HOP_KEY: randomBytes(32).toString('base64url'),
    BOOTSTRAP_CLIENT_ID: OPERATOR.id, BOOTSTRAP_CLIENT_SECRET: OPERATOR.secret,
  };
  servers = [await startChildServer(env), await startChildServer({ ...env, WORKERS: '2' })];
}, 300_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await database?.drop();
});

describe('the simulated sandbox provider across processes', () => {
  it('moves each sandbox rescue once per step, whichever of the processes polls', async () => {
    const [a, b] = servers.map((s) => gatewayClient(() => s.base));
    const admin = await adminToken({ request: a.request, client: OPERATOR });
    const created = await a.request('POST', '/platform/admin/v1/clients', {
      token: admin, body: { organisation: 'org-provider', sandbox: true },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { clientId, clientSecret } = created.body as { clientId: string; clientSecret: string };
    const token = await b.tokenFor(clientId, clientSecret);
    const reqIds: string[] = [];
    for (let i = 0; i < RESCUES; i += 1) {
      const gateway = i % 2 ? b : a;
      const member = await provision(gateway, token);
      const sessionId = await session(gateway, token, [{ key: 'vin', value: member.vin }]);
      const dispatched = await dispatch(gateway, token, sessionId);
      expect(dispatched.status, JSON.stringify(dispatched.body)).toBe(201);
      reqIds.push(dispatched.body.requestId as string);
    }
    const expected = ['BOOKED', ...SANDBOX_MOVES.map((m) => m.status)];
    const deadline = Date.now() + 30 * STEP_MS + 20_000;
    for (const reqId of reqIds) {
      let rescue: { status: string; statusHistory: { status: string }[] } | undefined;
      while (rescue?.status !== 'COMPLETED' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, STEP_MS));
        rescue = await readRescue(a, token, reqId);
      }
      // Let any second provider that would move it again have its chance, then read the history.
      await new Promise((resolve) => setTimeout(resolve, STEP_MS * 2));
      rescue = await readRescue(b, token, reqId);
      expect(rescue.statusHistory.map((e) => e.status)).toEqual(expected);
    }
  }, 120_000);
});

type Client = ReturnType<typeof gatewayClient>;
async function readRescue(gateway: Client, token: string, reqId: string) {
  const query = 'query R($id: ID!) { rescue(reqId: $id) { status statusHistory { status } } }';
  const res = await gateway.request('POST', '/graphql', { token, body: { query, variables: { id: reqId } } });
  expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
  return res.body.data.rescue as { status: string; statusHistory: { status: string }[] };
}
