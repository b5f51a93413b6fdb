/**
 * Trusted documents for an app whose users sign in at their organisation's OpenID provider: the
 * manifest is published for the issuer registration (`npm run documents -- --issuer ID`), and its
 * mode applies to every end user's token that registration admits, not to the organisation's clients.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runNode } from '../../support/child-server.ts';
import { startTestIssuer, type TestIssuer } from '../../support/oidc-issuer.ts';
import { adminToken, DEFAULT_CLIENT, startTestStack, type TestStack } from '../../support/stack.ts';

const APP_QUERY = 'query AppName { __typename }';
let t: TestStack;
let issuer: TestIssuer;
let work: string;
let issuerId: string;

const documents = async (...args: string[]) => {
  const run = await runNode(['gateway/trusted/documents-cli.ts', ...args, '--url', t.url, '--client-id', DEFAULT_CLIENT.id, '--client-secret', DEFAULT_CLIENT.secret], {});
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
};
const send = (token: string, body: Record<string, unknown>) => t.request('POST', '/graphql', { token, body });

beforeAll(async () => {
  t = await startTestStack({ subgraphs: [], env: { OIDC_ALLOW_LOOPBACK: 'true' } });
  issuer = await startTestIssuer();
  work = await mkdtemp(join(tmpdir(), 'user-documents-'));
  const admin = await adminToken(t);
  const trusted = await t.request('POST', '/platform/admin/v1/issuers', { token: admin, body: { issuer: issuer.url, organisation: t.org, audience: 'spa' } });
  expect(trusted.status, JSON.stringify(trusted.body)).toBe(201);
  issuerId = String(trusted.body.id);
}, 240_000);
afterAll(async () => {
  await t?.close();
  await issuer?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe("an issuer registration's trusted documents", () => {
  it('are enforced for its end users, by id, and not for the organisation\'s clients', async () => {
    const manifest = join(work, 'persisted-documents.json');
    await writeFile(manifest, JSON.stringify({ 'spa-app-name-v1': APP_QUERY }));
    const published = await documents('publish', manifest, '--issuer', issuerId);
    expect(published.owner).toEqual({ kind: 'issuer', id: issuerId });
    expect(await documents('mode', 'enforce', '--issuer', issuerId)).toEqual({ owner: { kind: 'issuer', id: issuerId }, mode: 'enforce' });

    const user = await issuer.sign({ sub: 'ann@example.com', aud: 'spa' });
    const byId = await send(user, { documentId: 'spa-app-name-v1' });
    expect(byId.status, JSON.stringify(byId.body)).toBe(200);
    expect(byId.body).toEqual({ data: { __typename: 'Query' } });
    const other = await send(user, { query: 'query Other { __typename }' });
    expect(other.status).toBe(403);
    expect(other.body.errors?.[0]?.extensions?.code).toBe('OPERATION_NOT_TRUSTED');
    // The organisation's own client is another owner: no manifest, mode off.
    expect((await send(t.token, { query: 'query Other { __typename }' })).status).toBe(200);
    expect((await send(t.token, { documentId: 'spa-app-name-v1' })).body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });
});
