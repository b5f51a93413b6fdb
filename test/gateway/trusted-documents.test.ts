/**
 * Trusted documents, as a frontend team uses them: a manifest built by
 * `@apollo/generate-persisted-query-manifest` from a small app's sources (test/gateway/trusted-app),
 * published through the admin API, and sent by Apollo Client 4's persisted query link with
 * `@apollo/persisted-query-lists`; then the modes, the hostile cases and the change log.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { generatePersistedQueryIdsFromManifest } from '@apollo/persisted-query-lists';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN_DOCUMENTS_PATH } from '../../gateway/admin/documents-routes.ts';
import { TrustedDocuments } from '../../gateway/trusted/registry.ts';
import { documentBreakingChanges, documentsOfDatabase, documentsOfFile } from '../../schema/contract/document-diff.ts';
import { CREATE_DRIVER, DRIVER } from './trusted-app/src/driver.ts';
import { sseClient, wsClient } from '../support/subscriptions.ts';
import { adminToken, DEFAULT_CLIENT, startTestStack, type TestStack } from '../support/stack.ts';

const APP = fileURLToPath(new URL('./trusted-app/', import.meta.url));
const GENERATE = fileURLToPath(new URL('../../node_modules/@apollo/generate-persisted-query-manifest/cli.js', import.meta.url));
const MANIFESTS = `${ADMIN_DOCUMENTS_PATH}/manifests`;
const DOCUMENTS_CLI = fileURLToPath(new URL('../../gateway/trusted/documents-cli.ts', import.meta.url));
const SUPERGRAPH = fileURLToPath(new URL('../../schema/supergraph.graphql', import.meta.url));

interface Operation { id: string; name: string; type: string; body: string }
interface Manifest { format: string; version: number; operations: Operation[] }

let t: TestStack;
let admin: string;
let manifest: Manifest;
let app: { clientId: string; token: string };
let work: string;

const byName = (name: string) => manifest.operations.find((o) => o.name === name)!;

/** The app's build step: the manifest generator run on its sources, as `npx generate-persisted-query-manifest` does. */
async function buildManifest(): Promise<Manifest> {
  await cp(APP, work, { recursive: true });
  await promisify(execFile)(process.execPath, [GENERATE], { cwd: work });
  return JSON.parse(await readFile(join(work, 'persisted-query-manifest.json'), 'utf8')) as Manifest;
}

const publish = (owner: Record<string, string>, body: unknown) => t.request('POST', MANIFESTS, { token: admin, body: { ...owner, manifest: body } });
const setMode = (owner: Record<string, string>, mode: string) => t.request('PUT', `${ADMIN_DOCUMENTS_PATH}/mode`, { token: admin, body: { ...owner, mode } });

/** Apollo Client 4 as the app ships it: ids from the manifest, each request recorded as it leaves. */
function appClient(token: string, useGETForHashedQueries = false) {
  const sent: { method: string; url: string; body?: { query?: string; extensions?: { persistedQuery?: unknown } } }[] = [];
  const recording: typeof fetch = async (input, init) => {
    sent.push({ method: init?.method ?? 'GET', url: String(input), body: typeof init?.body === 'string' ? JSON.parse(init.body) as never : undefined });
    return fetch(input, init);
  };
  const link = new PersistedQueryLink({ ...generatePersistedQueryIdsFromManifest({ loadManifest: () => manifest }), useGETForHashedQueries })
    .concat(new HttpLink({ uri: `${t.url}/graphql`, fetch: recording, headers: { authorization: `Bearer ${token}` } }));
  return { client: new ApolloClient({ link, cache: new InMemoryCache() }), sent };
}

const graphqlGet = (params: Record<string, unknown>, token: string) =>
  t.request('GET', `/graphql?${new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)]))}`, { token });
const apq = (sha256Hash: string) => ({ persistedQuery: { version: 1, sha256Hash } });

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'frg-trusted-app-'));
  [manifest, t] = await Promise.all([buildManifest(), startTestStack({ subgraphs: ['scoring'] })]);
  admin = await adminToken(t);
  app = await t.clientFor(t.org);
}, 240_000);
afterAll(async () => {
  await t?.close();
  await rm(work, { recursive: true, force: true });
});

describe('trusted documents', () => {
  it('publishes the manifest the app was built with, and lists it', async () => {
    expect(manifest.operations.map((o) => o.name).sort()).toEqual(['CreateDriver', 'Driver', 'DriverUpdates']);
    const published = await publish({ clientId: app.clientId }, manifest);
    expect(published.status).toBe(201);
    expect(published.body).toMatchObject({ owner: { kind: 'client', id: app.clientId }, format: 'apollo', documents: 3, retiredAt: null });
    const listed = await t.request('GET', `${MANIFESTS}?clientId=${app.clientId}`, { token: admin });
    expect(listed.body.manifests).toEqual([published.body]);
    expect((await t.request('GET', MANIFESTS, { token: t.token })).status).toBe(403);
    expect((await publish({ clientId: 'no-such-client' }, manifest)).status).toBe(404);
    expect((await publish({ clientId: app.clientId }, { format: 'apollo-persisted-query-manifest', version: 1, operations: [{ id: 'x', body: '{ broken' }] })).body)
      .toMatchObject({ code: 'BAD_USER_INPUT', field: 'manifest' });
  });

  it('Apollo Client sends ids only, over POST and GET, and the registered documents run', async () => {
    const { client, sent } = appClient(app.token);
    const created = await client.mutate({ mutation: CREATE_DRIVER, variables: { input: { userId: 'tdoc-driver', homeZip: '60601' } } });
    expect(created.data).toMatchObject({ createUser: { userId: 'tdoc-driver', homeZip: '60601' } });
    const read = await client.query({ query: DRIVER, variables: { userId: 'tdoc-driver' } });
    expect(read.data).toMatchObject({ user: { userId: 'tdoc-driver', homeZip: '60601' } });
    expect(sent.map((s) => [s.body?.query, s.body?.extensions?.persistedQuery])).toEqual([
      [undefined, apq(byName('CreateDriver').id).persistedQuery], [undefined, apq(byName('Driver').id).persistedQuery],
    ]);

    const overGet = appClient(app.token, true);
    const again = await overGet.client.query({ query: DRIVER, variables: { userId: 'tdoc-driver' } });
    expect(again.data).toMatchObject({ user: { homeZip: '60601' } });
    expect(overGet.sent).toHaveLength(1);
    expect(overGet.sent[0]!.method).toBe('GET');
    expect(new URL(overGet.sent[0]!.url).searchParams.has('query')).toBe(false);
  });

  it('an id-only mutation with an Idempotency-Key is the same request as its full text: the second is a replay', async () => {
    const body = { extensions: apq(byName('CreateDriver').id), variables: { input: { userId: 'tdoc-idem' } } };
    const headers = { 'idempotency-key': 'tdoc-idem-1' };
    const first = await t.request('POST', '/graphql', { token: app.token, body, headers });
    expect(first.body.data).toMatchObject({ createUser: { userId: 'tdoc-idem' } });
    const fullText = { query: byName('CreateDriver').body, variables: body.variables };
    const again = await t.request('POST', '/graphql', { token: app.token, body: fullText, headers });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  it("runs GraphQL over HTTP's documentId, and GraphQL Code Generator's manifest with ids of its own", async () => {
    const codegen = { 'driver-zip-v1': 'query DriverZip($userId: ID!) { user(userId: $userId) { homeZip } }' };
    expect((await publish({ clientId: app.clientId }, codegen)).body).toMatchObject({ format: 'codegen', documents: 1 });
    const byDocumentId = await t.request('POST', '/graphql', { token: app.token, body: { documentId: 'driver-zip-v1', variables: { userId: 'tdoc-driver' } } });
    expect(byDocumentId.body).toEqual({ data: { user: { homeZip: '60601' } } });
    const overGet = await graphqlGet({ documentId: 'driver-zip-v1', variables: { userId: 'tdoc-driver' } }, app.token);
    expect(overGet.body).toEqual({ data: { user: { homeZip: '60601' } } });
    // An opaque id in the APQ extension: no sha256 is checked when the text is not sent.
    const asApq = await t.request('POST', '/graphql', { token: app.token, body: { extensions: apq('driver-zip-v1'), variables: { userId: 'tdoc-driver' } } });
    expect(asApq.body).toEqual({ data: { user: { homeZip: '60601' } } });
  });

  it('answers PERSISTED_QUERY_NOT_FOUND for an unknown id, another client\'s id and a retired manifest\'s id', async () => {
    const unknown = await t.request('POST', '/graphql', { token: app.token, body: { documentId: 'no-such-document' } });
    expect(unknown.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    const other = await t.clientFor(t.org);
    for (const body of [{ documentId: 'driver-zip-v1' }, { extensions: apq(byName('Driver').id), variables: { userId: 'tdoc-driver' } }]) {
      const answer = await t.request('POST', '/graphql', { token: other.token, body });
      expect(answer.body.errors[0].extensions.code, JSON.stringify(body)).toBe('PERSISTED_QUERY_NOT_FOUND');
      expect(answer.body.data).toBeUndefined();
    }

    const retiring = await publish({ clientId: other.clientId }, { 'retire-me': '{ __typename }' });
    expect((await t.request('POST', '/graphql', { token: other.token, body: { documentId: 'retire-me' } })).body).toEqual({ data: { __typename: 'Query' } });
    const retired = await t.request('POST', `${MANIFESTS}/${retiring.body.manifestId}/retire`, { token: admin });
    expect(retired.body.retiredAt).toEqual(expect.any(String));
    const gone = await t.request('POST', '/graphql', { token: other.token, body: { documentId: 'retire-me' } });
    expect(gone.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });

  it('refuses a text sent with the id of another document (hash mismatch), registered or not', async () => {
    const forged = await t.request('POST', '/graphql', {
      token: app.token, body: { query: '{ user(userId: "tdoc-driver") { dateOfBirth } }', extensions: apq(byName('Driver').id) },
    });
    expect(forged.status).toBe(400);
    expect(forged.body.errors[0].message).toMatch(/provided sha does not match query/);
    expect(forged.body.data).toBeUndefined();
    const unregistered = await t.request('POST', '/graphql', { token: app.token, body: { query: '{ __typename }', extensions: apq('0'.repeat(64)) } });
    expect(unregistered.status).toBe(400);
    expect(unregistered.body.errors[0].message).toMatch(/provided sha does not match query/);
  });

  it('audit runs unregistered documents and logs each distinct one once a minute with its caller', async () => {
    expect((await setMode({ clientId: app.clientId }, 'audit')).body).toEqual({ owner: { kind: 'client', id: app.clientId }, mode: 'audit' });
    const warn = vi.spyOn(t.stack.gateway.trusted['log'], 'warn');
    try {
      for (let i = 0; i < 3; i += 1) expect((await t.graphql('{ __typename }', {}, app.token)).data).toEqual({ __typename: 'Query' });
      expect((await t.graphql('query Other { __typename }', {}, app.token)).data).toEqual({ __typename: 'Query' });
      expect((await appClient(app.token).client.query({ query: DRIVER, variables: { userId: 'tdoc-driver' } })).data).toBeTruthy();
      const audits = warn.mock.calls.filter(([, message]) => String(message).includes('(audit)'));
      expect(audits.map(([fields]) => (fields as { trustedDocuments: { operationName: string | null } }).trustedDocuments.operationName)).toEqual([null, 'Other']);
      expect(audits[0]![0]).toMatchObject({ trustedDocuments: { owner: { kind: 'client', id: app.clientId }, clientId: app.clientId, orgId: t.org } });
    } finally {
      warn.mockRestore();
    }
  });

  it('enforce refuses unregistered documents on POST, GET, WebSocket and SSE with OPERATION_NOT_TRUSTED; ids, registered texts and REST rows run', async () => {
    await setMode({ clientId: app.clientId }, 'enforce');
    const post = await t.request('POST', '/graphql', { token: app.token, body: { query: '{ user(userId: "tdoc-driver") { homeZip } }' } });
    expect(post.status).toBe(403);
    expect(post.body.errors[0].extensions.code).toBe('OPERATION_NOT_TRUSTED');
    const get = await graphqlGet({ query: '{ __typename }' }, app.token);
    expect(get.status).toBe(403);
    expect(get.body.errors[0].extensions.code).toBe('OPERATION_NOT_TRUSTED');
    // An APQ hash of a text the app never registered is not looked up in the APQ cache.
    const apqOnly = await t.request('POST', '/graphql', { token: app.token, body: { extensions: apq('1'.repeat(64)) } });
    expect(apqOnly.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');

    // The registered documents: by id, and by their full text (the persisted query link's retry sends it with its id).
    const { client } = appClient(app.token);
    expect((await client.query({ query: DRIVER, variables: { userId: 'tdoc-driver' } })).data).toMatchObject({ user: { homeZip: '60601' } });
    const fullText = await t.request('POST', '/graphql', { token: app.token, body: { query: byName('Driver').body, variables: { userId: 'tdoc-driver' } } });
    expect(fullText.body.data).toMatchObject({ user: { homeZip: '60601' } });
    // A REST row runs the service's own operation, not the caller's document.
    expect((await t.request('GET', '/shared-mobility-insights/v2/users/tdoc-driver', { token: app.token })).status).toBe(200);

    const ws = wsClient(t.url, `Bearer ${app.token}`);
    const sse = sseClient(t.url, `Bearer ${app.token}`);
    try {
      const freeForm = 'subscription { userUpdated(userId: "tdoc-driver") { homeZip } }';
      const overWs = await ws.subscribe(freeForm).ended as { extensions?: { code?: string } }[];
      expect(overWs[0]!.extensions?.code).toBe('OPERATION_NOT_TRUSTED');
      const overSse = await sse.subscribe(freeForm).ended as { response: Response };
      expect(overSse.response.status).toBe(403);
      expect((await overSse.response.json() as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('OPERATION_NOT_TRUSTED');
      const registered = ws.subscribe(byName('DriverUpdates').body, { userId: 'tdoc-driver' });
      await vi.waitFor(async () => expect((await t.stack.gateway.metrics.subscriptionsActive.get()).values.reduce((s, v) => s + v.value, 0)).toBe(1));
      registered.dispose();
    } finally {
      ws.dispose();
      sse.dispose();
    }
    await setMode({ clientId: app.clientId }, 'off');
    expect((await t.graphql('{ __typename }', {}, app.token)).data).toEqual({ __typename: 'Query' });
  });

  it('a change is in force on another gateway process within 2 s (the change log)', async () => {
    const elsewhere = new TrustedDocuments(t.stack.gateway.documentStore, t.stack.gateway.app.log);
    await elsewhere.start(1_000);
    try {
      const caller = { clientId: app.clientId, orgId: t.org, scopes: [] };
      expect(await elsewhere.resolve(caller, { query: '{ __typename }' })).toBeUndefined();
      await setMode({ clientId: app.clientId }, 'enforce');
      await vi.waitFor(() => expect(elsewhere.resolve(caller, { query: '{ __typename }' })).rejects.toMatchObject({ code: 'OPERATION_NOT_TRUSTED', status: 403 }), { timeout: 2_000, interval: 100 });
      const late = await publish({ clientId: app.clientId }, { 'late-v1': '{ __typename }' });
      await vi.waitFor(async () => expect(await elsewhere.resolve(caller, { id: 'late-v1' })).toBe('{ __typename }'), { timeout: 2_000, interval: 100 });
      await t.request('POST', `${MANIFESTS}/${late.body.manifestId}/retire`, { token: admin });
      await vi.waitFor(() => expect(elsewhere.resolve(caller, { id: 'late-v1', idKind: 'documentId' })).rejects.toMatchObject({ code: 'PERSISTED_QUERY_NOT_FOUND' }), { timeout: 2_000, interval: 100 });
    } finally {
      elsewhere.stop();
      await setMode({ clientId: app.clientId }, 'off');
    }
  });

  it('keeps manifests and modes of issuer registrations apart from clients', async () => {
    expect((await publish({ issuerId: 'issuer_unknown' }, { 'user-app-v1': '{ __typename }' })).status).toBe(404);
    const trusted = await t.request('POST', '/platform/admin/v1/issuers', {
      token: admin, body: { issuer: 'https://login.trusted-app.example/', organisation: t.org, audience: `app-${app.clientId}` },
    });
    const issuerId = String(trusted.body.id);
    expect((await publish({ issuerId }, { 'user-app-v1': '{ __typename }' })).body.owner).toEqual({ kind: 'issuer', id: issuerId });
    expect((await setMode({ issuerId }, 'enforce')).body).toEqual({ owner: { kind: 'issuer', id: issuerId }, mode: 'enforce' });
    const listed = await t.request('GET', `${MANIFESTS}?issuerId=${issuerId}`, { token: admin });
    expect(listed.body.modes).toEqual([{ owner: { kind: 'issuer', id: issuerId }, mode: 'enforce' }]);
    // An end user admitted by that registration (its id as client id, and a user id) gets its documents and mode.
    const user = { clientId: issuerId, orgId: t.org, scopes: [], userId: 'user-1' };
    expect(await t.stack.gateway.trusted.resolve(user, { id: 'user-app-v1', idKind: 'documentId' })).toBe('{ __typename }');
    await expect(t.stack.gateway.trusted.resolve(user, { query: 'query Free { __typename }' })).rejects.toMatchObject({ code: 'OPERATION_NOT_TRUSTED' });
    // A client of the same id is another owner.
    await expect(t.stack.gateway.trusted.resolve({ clientId: issuerId, orgId: t.org, scopes: [] }, { id: 'user-app-v1', idKind: 'documentId' }))
      .rejects.toMatchObject({ code: 'PERSISTED_QUERY_NOT_FOUND' });
    expect((await setMode({ issuerId, clientId: app.clientId }, 'off')).status).toBe(400);
  });

  it('npm run documents publishes, lists, sets the mode and retires through the admin API', async () => {
    const cli = async (...args: string[]) => {
      const operator = ['--url', t.url, '--client-id', DEFAULT_CLIENT.id, '--client-secret', DEFAULT_CLIENT.secret];
      const { stdout } = await promisify(execFile)(process.execPath, [DOCUMENTS_CLI, ...args, ...operator], { env: { ...process.env, LOG_LEVEL: 'warn' } });
      return JSON.parse(stdout) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    };
    const { clientId, token } = await t.clientFor(t.org);
    const published = await cli('publish', join(work, 'persisted-query-manifest.json'), '--client', clientId);
    expect(published).toMatchObject({ owner: { kind: 'client', id: clientId }, name: 'persisted-query-manifest.json', documents: 3 });
    expect(await cli('mode', 'enforce', '--client', clientId)).toEqual({ owner: { kind: 'client', id: clientId }, mode: 'enforce' });
    expect((await cli('list', '--client', clientId)).manifests).toEqual([published]);
    expect((await t.graphql('{ __typename }', {}, token)).errors?.[0]?.extensions?.code).toBe('OPERATION_NOT_TRUSTED');
    expect((await cli('retire', published.manifestId as string)).retiredAt).toEqual(expect.any(String));
    const refused = await promisify(execFile)(process.execPath, [DOCUMENTS_CLI, 'mode', 'sometimes', '--client', clientId, '--url', t.url,
      '--client-id', DEFAULT_CLIENT.id, '--client-secret', DEFAULT_CLIENT.secret]).catch((error: { code: number; stderr: string }) => error);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining('400') });
  });

  it("npm run compose's gate names each registered document a change would break", async () => {
    const baseline = await readFile(SUPERGRAPH, 'utf8');
    const withoutZip = baseline.replace('  """Home ZIP code; needed for a coverage score."""\n  homeZip: ZipCode @join__field(graph: SCORING)\n', '');
    expect(withoutZip).not.toBe(baseline);
    const fromFile = await documentsOfFile(join(work, 'persisted-query-manifest.json'));
    const unrelated = [{ where: 'other.json', documentId: 'typename', operationName: null, body: '{ __typename }' }];
    const changes = documentBreakingChanges(baseline, withoutZip, [...fromFile, ...unrelated]);
    expect(changes.map((c) => `${c.kind} ${c.location}`).sort()).toEqual(
      ['CreateDriver', 'Driver', 'DriverUpdates'].map((name) => `DOCUMENT_BROKEN persisted-query-manifest.json/${byName(name).id}`).sort(),
    );
    expect(changes.find((c) => c.location.endsWith(byName('Driver').id))!.message).toBe('Driver: Cannot query field "homeZip" on type "User".');
    expect(documentBreakingChanges(baseline, baseline, fromFile)).toEqual([]);
    // On PostgreSQL the gate reads the documents in force from the gateway's database as well (DATABASE_URL).
    const url = t.config.DATABASE_URL;
    if (url) {
      const registered = await documentsOfDatabase(url);
      expect(registered.filter((d) => d.where === `client:${app.clientId}`).map((d) => d.documentId)).toEqual(expect.arrayContaining([byName('Driver').id, 'driver-zip-v1']));
      expect(registered.some((d) => d.documentId === 'retire-me')).toBe(false);
    }
  });
});
