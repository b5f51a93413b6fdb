/**
 * End users' tokens from organisations' OpenID Connect issuers, attacked: every token below is
 * checked by the gateway's token gate (an accepted one reaches the admin API and is refused there
 * with 403, as any non-operator; a refused one gets 401, or 503 when its issuer's keys cannot be had).
 */
import { SignJWT, base64url, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestIssuer, type TestIssuer } from '../../support/oidc-issuer.ts';
import { adminToken, startTestStack, type TestStack } from '../../support/stack.ts';

const ISSUERS = '/platform/admin/v1/issuers';
const PROBE = '/platform/admin/v1/clients';
let t: TestStack;
let admin: string;
let issuer: TestIssuer;
const opened: TestIssuer[] = [];

const newIssuer = async (kid?: string) => {
  const started = await startTestIssuer(kid);
  opened.push(started);
  return started;
};
const trust = async (url: string, organisation: string, audience: string, extra: Record<string, unknown> = {}) => {
  const res = await t.request('POST', ISSUERS, { token: admin, body: { issuer: url, organisation, audience, ...extra } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string };
};
/** What the gate made of a token: 403 accepted (not an operator), 401 refused, 503 keys unavailable. */
const probe = async (token: string) => {
  const res = await t.request('GET', PROBE, { token });
  return { status: res.status, detail: String((res.body as { detail?: string }).detail ?? '') };
};
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  t = await startTestStack({ subgraphs: [], env: { OIDC_ALLOW_LOOPBACK: 'true' } });
  admin = await adminToken(t);
  issuer = await newIssuer();
  await trust(issuer.url, 'org-a', 'fleet-app');
}, 240_000);
afterAll(async () => {
  await t?.close();
  for (const started of opened) await started.close();
});

describe("an organisation's issuer", () => {
  it("accepts its users' tokens, and fetches its keys once", async () => {
    expect(await probe(await issuer.sign({ sub: 'ann@example.com', aud: 'fleet-app' }))).toMatchObject({ status: 403 });
    expect(await probe(await issuer.sign({ sub: 'bob@example.com', aud: 'fleet-app' }))).toMatchObject({ status: 403 });
    expect(issuer.hits).toEqual({ discovery: 1, jwks: 1 });
  });

  it('refuses a token from an issuer no organisation trusts, without ever calling that issuer', async () => {
    const stranger = await newIssuer();
    expect(await probe(await stranger.sign({ sub: 'eve', aud: 'fleet-app' }))).toMatchObject({ status: 401, detail: expect.stringMatching(/not trusted/) });
    expect(stranger.hits).toEqual({ discovery: 0, jwks: 0 });
  });

  it('refuses its token for another audience, expired, or without the user claim', async () => {
    expect((await probe(await issuer.sign({ sub: 'ann', aud: 'other-app' }))).status).toBe(401);
    const expired = await probe(await issuer.sign({ sub: 'ann', aud: 'fleet-app' }, { expiresIn: now() - 120 }));
    expect(expired).toMatchObject({ status: 401, detail: expect.stringMatching(/expired/) });
    // Within the 60 s of clock skew allowed.
    expect((await probe(await issuer.sign({ sub: 'ann', aud: 'fleet-app' }, { expiresIn: now() - 20 }))).status).toBe(403);
    expect((await probe(await issuer.sign({ aud: 'fleet-app' }))).status).toBe(401);
  });

  it('refuses a token signed by a key its key set does not hold, and fetches no set for it within the 30 s cool-down', async () => {
    const forged = (await generateKeyPair('ES256')).privateKey;
    const before = issuer.hits.jwks;
    // The published kid with another key, then unknown kids: refused, the set not fetched again so soon
    // (test/gateway/oidc/issuer-keys.test.ts moves the clock past the cool-down).
    expect(await probe(await issuer.sign({ sub: 'ann', aud: 'fleet-app' }, { key: forged }))).toMatchObject({ status: 401 });
    for (const kid of ['unknown-1', 'unknown-2']) {
      expect(await probe(await issuer.sign({ sub: 'ann', aud: 'fleet-app' }, { key: forged, kid }))).toMatchObject({ status: 401 });
    }
    expect(issuer.hits.jwks).toBe(before);
  });

  it("refuses alg none, and HS256 with the issuer's public key as the secret", async () => {
    const claims = { iss: issuer.url, sub: 'ann', aud: 'fleet-app', exp: now() + 600 };
    const encode = (value: object) => base64url.encode(JSON.stringify(value));
    const none = `${encode({ alg: 'none', typ: 'JWT' })}.${encode(claims)}.`;
    expect(await probe(none)).toMatchObject({ status: 401 });
    for (const secret of [JSON.stringify(issuer.publicJwk), issuer.publicJwk.x!]) {
      const hmac = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: issuer.publicJwk.kid }).sign(new TextEncoder().encode(secret));
      expect(await probe(hmac)).toMatchObject({ status: 401 });
    }
  });

  it("refuses a token naming one issuer, signed with another issuer's key of the same kid", async () => {
    const other = await newIssuer('key-1');
    await trust(other.url, 'org-b', 'fleet-app');
    expect((await probe(await other.sign({ sub: 'mallory', aud: 'fleet-app' }))).status).toBe(403);
    const borrowed = await other.sign({ iss: issuer.url, sub: 'mallory', aud: 'fleet-app' });
    expect(await probe(borrowed)).toMatchObject({ status: 401 });
  });
});

describe('one organisation per (issuer, audience)', () => {
  it('refuses the same issuer and audience for a second organisation; another audience is another registration', async () => {
    const res = await t.request('POST', ISSUERS, { token: admin, body: { issuer: issuer.url, organisation: 'org-b', audience: 'fleet-app' } });
    expect(res).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
    await trust(issuer.url, 'org-b', 'org-b-app');
    // A token whose audiences span both organisations acts in neither.
    expect((await probe(await issuer.sign({ sub: 'ann', aud: ['fleet-app', 'org-b-app'] }))).status).toBe(401);
  });
});

describe('an issuer whose keys cannot be had', () => {
  it('answers 503 within the 5 s bound while a hanging key set holds, without holding anyone else, then from memory', async () => {
    const hanging = await newIssuer();
    hanging.behaviour = 'hang';
    await trust(hanging.url, 'org-c', 'hangs');
    const stuck = probe(await hanging.sign({ sub: 'ann', aud: 'hangs' }));
    let settled = false;
    void stuck.then(() => { settled = true; });
    // Other callers are answered while the fetch hangs.
    expect((await t.request('GET', PROBE, { token: t.token })).status).toBe(403);
    expect(await probe(await issuer.sign({ sub: 'ann', aud: 'fleet-app' }))).toMatchObject({ status: 403 });
    expect(settled).toBe(false);
    expect(await stuck).toMatchObject({ status: 503, detail: expect.stringMatching(/timed out/) });
    // The failure is remembered for the cool-down: answered at once, no second fetch.
    expect(await probe(await hanging.sign({ sub: 'bob', aud: 'hangs' }))).toMatchObject({ status: 503 });
    expect(hanging.hits.jwks).toBe(1);
  }, 20_000);

  it('never follows a key set redirect (to loopback here), and refuses a key set that is not one', async () => {
    for (const behaviour of ['redirect', 'garbage'] as const) {
      const broken = await newIssuer();
      broken.behaviour = behaviour;
      await trust(broken.url, 'org-c', behaviour);
      const first = await probe(await broken.sign({ sub: 'ann', aud: behaviour }));
      expect(first, behaviour).toMatchObject({ status: 503, detail: expect.stringMatching(behaviour === 'redirect' ? /redirect/ : /not a JSON Web Key Set/) });
      expect((await probe(await broken.sign({ sub: 'bob', aud: behaviour }))).status).toBe(503);
      expect(broken.hits.jwks, behaviour).toBe(1);
    }
  });
});
