/**
 * Conformance walk: every operation of /openapi.json, once with a valid request and once with an invalid
 * one, each answer checked strictly (closed response schemas: an undocumented field fails) for status,
 * media type, declared headers and body by openapi-backend (test/support/openapi.ts). A new operation
 * without a case fails the count. The valid answers are the document's examples
 * (gateway/rest/examples/<operationId>.json, see test/support/examples.ts): refresh them with `npm run examples`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiContract } from '../support/openapi.ts';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { adminToken, startTestStack, type TestStack } from '../support/stack.ts';
import { startReceiver, waitFor } from '../webhooks/receiver.ts';
import { countedUuids, exampleFile, fixedExample } from '../support/examples.ts';
import { CASES, type Ids, type Step } from './conformance-cases.ts';

type Json = Record<string, unknown>;

let t: TestStack;
let contract: OpenApiContract;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const ids: Ids = {};
const violations: string[] = [];
/** Each operation's valid request and answer, by operationId. */
const answered = new Map<string, { parameters: Record<string, string>; status: number; mediaType: string; body: unknown }>();

async function send(operation: { method: string; path: string }, step: Step) {
  const params = step.params ?? {};
  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (params[name] === undefined) throw new Error(`${operation.path}: no value for {${name}}`);
    return encodeURIComponent(params[name]);
  });
  const search = new URLSearchParams(step.query ?? {}).toString();
  const url = search ? `${path}?${search}` : path;
  const method = operation.method.toUpperCase();
  const token = step.token === undefined ? t.token : step.token;
  const res = await t.request(method, url, { token, body: step.body, form: step.form, headers: step.headers });
  violations.push(...contract.check(method, url, res));
  return res;
}

let restoreUuids: () => void;

beforeAll(async () => {
  restoreUuids = countedUuids();
  receiver = await startReceiver();
  t = await startTestStack({ env: { WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  // The Risk Index answers from its full data set (it loads in the background on a first start).
  await riskDataLoaded(t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em);
  const doc = (await t.request('GET', '/openapi.json')).body as Json;
  contract = await OpenApiContract.of(doc, { strict: true });
  // The bootstrap client may ask for the admin scope (it does not get it unasked).
  Object.assign(ids, { adminToken: await adminToken(t), receiverUrl: receiver.url });
}, 600_000);
afterAll(async () => {
  await receiver?.close();
  await t?.close();
  restoreUuids();
});

describe('conformance walk', () => {
  it('has one case for every operation of the document', () => {
    const documented = contract.operations().map((o) => String(o.operation.operationId)).sort();
    expect(Object.keys(CASES).sort()).toEqual(documented);
    expect(Object.keys(CASES).length).toBe(documented.length);
  });

  it('every operation answers a valid and an invalid request as documented', async () => {
    const byId = new Map(contract.operations().map((o) => [String(o.operation.operationId), o]));
    const wrong: string[] = [];
    for (const [operationId, kase] of Object.entries(CASES)) {
      const operation = byId.get(operationId);
      if (!operation) continue;
      if (kase.before) await kase.before({ t, ids, waitFor, receiver });
      const valid = kase.valid(ids);
      const ok = await send(operation, valid);
      if (ok.status >= 300) wrong.push(`${operationId} valid: ${ok.status} ${JSON.stringify(ok.body)}`);
      else {
        const mediaType = (ok.headers.get('content-type') ?? '').split(';')[0];
        const parameters: Record<string, string> = { ...valid.params, ...valid.query };
        if (kase.next) {
          const link = /<([^>]+)>;\s*rel="next"/.exec(ok.headers.get('link') ?? '');
          if (!link) wrong.push(`${operationId} valid: no Link rel="next" to walk`);
          else {
            const nextStep = kase.next(new URL(link[1], 'http://x').searchParams);
            const next = await send(operation, nextStep);
            if (next.status >= 300) wrong.push(`${operationId} next page: ${next.status} ${JSON.stringify(next.body)}`);
            for (const [name, value] of Object.entries(nextStep.query ?? {})) parameters[name] ??= value;
          }
        }
        answered.set(operationId, { parameters, status: ok.status, mediaType, body: ok.body });
        kase.after?.(ok.body as Json, ids);
      }
      const bad = await send(operation, kase.invalid(ids));
      if (bad.status < 400 || bad.status >= 500) wrong.push(`${operationId} invalid: ${bad.status} ${JSON.stringify(bad.body)}`);
    }
    console.log(`Conformance walk: ${Object.keys(CASES).length} operations, ${Object.keys(CASES).length * 2} requests, ${violations.length} violations of the strict document`);
    expect(wrong).toEqual([]);
  }, 300_000);

  it('found no answer that breaks the strict document', () => {
    expect([...new Set(violations)]).toEqual([]);
  });

  it('catches an undocumented field, status and media type', () => {
    const [operationId, sample] = [...answered].find(([, a]) => a.status === 200 && typeof a.body === 'object' && a.body !== null && !Array.isArray(a.body))!;
    const op = contract.operations().find((o) => o.operation.operationId === operationId)!;
    const url = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(sample.parameters[name] ?? 'x'));
    const json = new Headers({ 'content-type': 'application/json' });
    expect(contract.check(op.method, url, { status: 200, headers: json, body: sample.body })).toEqual([]);
    expect(contract.check(op.method, url, { status: 200, headers: json, body: { ...(sample.body as Json), undocumentedField: 1 } })[0]).toMatch(/undocumentedField/);
    expect(contract.check(op.method, url, { status: 418, headers: json, body: {} })[0]).toMatch(/status not listed/);
    expect(contract.check(op.method, url, { status: 200, headers: new Headers({ 'content-type': 'text/html' }), body: '<p>' })[0]).toMatch(/content type text\/html not declared/);
  });
});

describe('examples from real answers', () => {
  it('are committed and fresh (refresh with `npm run examples`)', async () => {
    for (const [operationId, { parameters, mediaType, body }] of answered) {
      const example = body === '' ? { parameters } : { parameters, ...(mediaType === 'application/json' ? {} : { mediaType }), response: body };
      await expect.soft(exampleFile(fixedExample(example)), `${operationId}: run npm run examples`).toMatchFileSnapshot(`../../gateway/rest/examples/${operationId}.json`);
    }
  });
});

