/**
 * Issue 23 items 1 and 2: every body with a known shape is described. The generated document has no
 * object schema without properties (but documented open maps), and real answers of the roadside and
 * Risk Index operations conform to their schemas made strict (no undocumented field passes).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiContract, operationsOf, resolveIn } from '../support/openapi.ts';
import { buildOpenApi } from '../../gateway/rest/openapi.ts';
import { restRoutes } from '../../gateway/rest/index.ts';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { CHICAGO, provision, RS, roadsideToken, session, status } from '../roadside/helpers.ts';
import { sourceAFull, sourceBFull } from '../scoring/mvr-fixtures.ts';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const doc = buildOpenApi(restRoutes) as unknown as Json;

/** Properties whose value is any JSON object by design: partner-defined parameters, a webhook's resource (documented by its own path). */
const OPEN_MAPS = new Set(['additionalParameters', 'resource']);

/** Where a schema (and what it contains) leaves a shape unstated: `{}`, or an object without properties. */
function gaps(document: Json, schema: unknown, at: string, seen = new Set<unknown>()): string[] {
  if (!isObject(schema) || seen.has(schema)) return [];
  seen.add(schema);
  if (typeof schema.$ref === 'string') {
    const target = (schema.$ref as string).slice(2).split('/').reduce<unknown>((node, k) => (isObject(node) ? node[k] : undefined), document);
    return gaps(document, target, at, seen);
  }
  const out: string[] = [];
  const keywords = Object.keys(schema).filter((k) => !['description', 'example', 'examples', 'deprecated'].includes(k));
  if (!keywords.length) out.push(`${at}: {}`);
  const open = OPEN_MAPS.has(at.split('.').pop() ?? '') && schema.additionalProperties === true;
  // A map whose values have a stated shape (`additionalProperties: { ... }`) is stated too.
  const map = isObject(schema.additionalProperties);
  if ([schema.type].flat().includes('object') && !isObject(schema.properties) && !open && !map) out.push(`${at}: an object without properties`);
  if (map) out.push(...gaps(document, schema.additionalProperties, `${at}{}`, seen));
  for (const [name, value] of Object.entries(isObject(schema.properties) ? schema.properties : {})) out.push(...gaps(document, value, `${at}.${name}`, seen));
  if (schema.items !== undefined) out.push(...gaps(document, schema.items, `${at}[]`, seen));
  for (const key of ['oneOf', 'anyOf', 'allOf'] as const) for (const [i, s] of (Array.isArray(schema[key]) ? schema[key] : []).entries()) out.push(...gaps(document, s, `${at}/${key}/${i}`, seen));
  return out;
}

/** Every JSON request and success body of the document, by operation. */
function bodies(document: Json): { at: string; schema: unknown }[] {
  return operationsOf(document).flatMap(({ method, path, operation }) => {
    const at = `${method.toUpperCase()} ${path}`;
    const request = resolveIn(document, operation.requestBody);
    const requests = Object.entries((request?.content ?? {}) as Record<string, Json>).map(([type, media]) => ({ at: `${at} request ${type}`, schema: media.schema }));
    const responses = Object.entries(operation.responses as Json).filter(([s]) => s.startsWith('2')).flatMap(([s, r]) => Object.entries((resolveIn(document, r)?.content ?? {}) as Record<string, Json>)
      .filter(([type]) => /json/.test(type)).map(([type, media]) => ({ at: `${at} ${s} ${type}`, schema: media.schema })));
    return [...requests, ...responses];
  });
}

describe('the generated document', () => {
  it('states every shape: no `{}` body and no object without properties (but documented open maps)', () => {
    const found = bodies(doc).flatMap(({ at, schema }) => gaps(doc, schema, at));
    expect(found).toEqual([]);
    expect(bodies(doc).length).toBeGreaterThan(120);
  });

  it('catches a body left unstated', () => {
    const broken = structuredClone(doc) as { paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: unknown }> }> }>> };
    broken.paths['/services/roadside/v1/rescue/eta'].get.responses[200].content['application/json'].schema = {};
    broken.paths['/riskIndex/v1/riskInfo'].get.responses[200].content['application/json'].schema = { type: 'object', properties: { riskInfo: { type: 'object' } } };
    const found = bodies(broken as unknown as Json).flatMap(({ at, schema }) => gaps(broken as unknown as Json, schema, at));
    expect(found).toEqual(['GET /riskIndex/v1/riskInfo 200 application/json.riskInfo: an object without properties', 'GET /services/roadside/v1/rescue/eta 200 application/json: {}']);
  });

  it('embeds the MVR report schemas as open components referenced by createMvr', () => {
    const schemas = (doc.components as { schemas: Record<string, Json> }).schemas;
    for (const [operationId, name] of [['createSourceAMVR', 'MvrSourceAReport'], ['createSourceBMVR', 'MvrSourceBReport']]) {
      const op = operationsOf(doc).find((o) => o.operation.operationId === operationId)!;
      expect((op.operation.requestBody as { content: Record<string, { schema: Json }> }).content['application/json'].schema).toEqual({ $ref: `#/components/schemas/${name}` });
      expect(schemas[name].additionalProperties).not.toBe(false);
      expect(schemas[name].$id).toBeUndefined();
      expect(JSON.stringify(schemas[name])).not.toContain('"#/$defs/');
    }
  });

  it('states the rules of paths: a VIN, a product name, the rescue status and file type enums', () => {
    const param = (operationId: string, name: string) => (operationsOf(doc).find((o) => o.operation.operationId === operationId)!.operation.parameters as Json[])
      .find((p) => p.name === name)!.schema as { pattern: string };
    expect(new RegExp(param('getVehicle', 'vin').pattern).test('1HGCM82633A004352')).toBe(true);
    expect(new RegExp(param('getVehicle', 'vin').pattern).test('1HGCM82633A00435')).toBe(false);
    const product = new RegExp(param('registerUserProduct', 'productName').pattern);
    for (const name of ['Driving Behavior', 'driving-behavior', 'CRASH_DETECTION', 'Roadside Assistance']) expect(product.test(name), name).toBe(true);
    // Vehicle Health is for vehicles only: a user registration names it in vain (400)
    for (const name of ['Vehicle Health', 'Driving', 'Driving Behaviorx']) expect(product.test(name), name).toBe(false);
    expect(new RegExp(param('registerVehicleProduct', 'productName').pattern).test('vehicle-health')).toBe(true);
    const schemas = (doc.components as { schemas: Record<string, { properties: Record<string, Json> }> }).schemas;
    expect(schemas.RescueServiceRequest.properties.status.enum).toEqual(['BOOKED', 'EN-ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED', 'CANCELLED']);
    expect(schemas.RescueProviderFile.properties.fileType.enum).toEqual(['PHOTO', 'INVOICE', 'RECEIPT', 'SIGNATURE', 'DAMAGE_REPORT', 'OTHER']);
  });
});

describe('real answers conform to the strict document', () => {
  let t: TestStack;
  let token: string;
  let contract: OpenApiContract;
  const checked = new Set<string>();
  const violations: string[] = [];

  /** Calls the gateway and checks the answer (expected status) against the strict document. */
  async function call(method: string, url: string, expected: number, options: { body?: unknown; form?: Record<string, string>; token?: string | null } = {}) {
    const res = await t.request(method, url, { token: options.token === undefined ? token : options.token, body: options.body, form: options.form });
    expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBe(expected);
    const found = contract.find(method, url);
    if (found) checked.add(String(found.operationId));
    violations.push(...contract.check(method, url, res));
    return res;
  }

  beforeAll(async () => {
    contract = await OpenApiContract.of(doc, { strict: true });
    t = await startTestStack({ subgraphs: ['roadside', 'risk', 'scoring'] });
    token = (await roadsideToken(t)).body.access_token as string;
    await riskDataLoaded(t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em);
  }, 600_000);
  afterAll(async () => { await t?.close(); });

  it('the roadside operations', async () => {
    const member = await provision(t, token, { numberOfEvents: '10' });
    const key = `${RS}/provisioning/formpost/member/${member.memberId}/asset/${member.assetIntegrationId}/partner/${member.partnerCode}`;
    await call('POST', `${RS}/ars_provisioning_v1/formpost`, 201, { form: { partnerCode: 'ACME', memberId: `${member.memberId}-2`, assetIntegrationId: 'A-2', firstName: 'Lee', lastName: 'Park' } });
    await call('GET', key, 200);
    await call('PUT', key, 200, { body: { milesPerTow: 50, effectiveEndDate: '2031-06-30' } });
    const sessionId = await session(t, token, [{ key: 'memberId', value: member.memberId }, { key: 'partnerCode', value: 'ACME' }]);
    await call('POST', `${RS}/rescue/session`, 201, { body: { appId: 'shapes', benefits: [{ key: 'vin', value: member.vin }] } });
    await call('GET', `${RS}/rescue/benefits?sessionId=${sessionId}`, 200);
    await call('GET', `${RS}/rescue/available?latitude=${CHICAGO.latitude}&longitude=${CHICAGO.longitude}&service=tow,battery`, 200);
    await call('GET', `${RS}/vehicle/makes`, 200);
    await call('GET', `${RS}/vehicle/makes/honda/models`, 200);
    const { body: { locations } } = await call('POST', `${RS}/rescue/tow/locations`, 200, { body: { latitude: CHICAGO.latitude, longitude: CHICAGO.longitude, type: 'REPAIR_SHOP' } });
    await call('POST', `${RS}/rescue/costs`, 200, { body: { sessionId, disablementLocation: CHICAGO, towLocationId: locations[0].locationId } });
    const tow = await call('POST', `${RS}/rescue/tow`, 201, { body: { sessionId, disablementLocation: CHICAGO, towLocationId: locations[0].locationId, vehicle: { color: 'Blue' }, customer: { phone: '+1 312 555 0100' } } });
    const reqId = tow.body.requestId as string;
    await call('POST', `${RS}/rescue/tire`, 201, { body: { sessionId, disablementLocation: CHICAGO, spareAvailable: true } });
    await call('POST', `${RS}/rescue/lockout`, 201, { body: { sessionId, disablementLocation: CHICAGO, keysLocation: 'in_trunk' } });
    const gas = await call('POST', `${RS}/rescue/gas`, 201, { body: { sessionId, disablementLocation: CHICAGO, fuelType: 'DIESEL', comments: 'Blue van' } });
    await call('POST', `${RS}/rescue/battery`, 201, { body: { sessionId, disablementLocation: CHICAGO, batteryService: 'REPLACE' } });
    await call('POST', `${RS}/rescue/reqId/${gas.body.requestId as string}/cancel`, 200, { body: { reason: 'Found a can' } });
    await call('GET', `${RS}/rescue/reqId/${reqId}/providers`, 200);
    await call('GET', `${RS}/rescue/eta?reqId=${reqId}`, 200);
    for (const next of ['EN-ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED']) {
      const res = await status(t, token, reqId, next, { latitude: 41.88, longitude: -87.64 });
      expect(res.status).toBe(200);
      violations.push(...contract.check('POST', `${RS}/rescue/statusUpdate`, res));
      checked.add('statusUpdate');
    }
    const done = await call('GET', `${RS}/rescue/reqId/${reqId}`, 200);
    expect(done.body.serviceRequest.statusHistory.length).toBeGreaterThan(4);
    expect(done.body.serviceRequest.destinationAddress.towLocationId).toBe(locations[0].locationId);
    await call('POST', `${RS}/rescue/feedback`, 201, { body: { requestId: reqId, rating: 5, comment: 'Quick' } });
    const upload = await call('POST', `${RS}/provider/fileservice/upload`, 201, { body: { requestId: reqId, fileType: 'receipt', fileName: 'r.txt', contentType: 'text/plain', content: 'UGFpZCAkOTU=' } });
    expect(upload.body.contentId).toMatch(/^[0-9a-f-]{36}$/);
    // the file's bytes come with the documented headers
    const file = await t.request('GET', `${RS}/provider/fileservice/retrieve/${upload.body.contentId as string}`, { token });
    expect([file.status, file.body]).toEqual([200, 'Paid $95']);
    const retrieve = contract.operations().find((o) => o.operation.operationId === 'retrieveFile')!;
    const headers = ((retrieve.operation.responses as Json)[200] as { headers: Json }).headers;
    expect(Object.keys(headers)).toEqual(['Content-Disposition', 'X-Content-SHA256', 'X-Request-Id', 'RateLimit-Policy', 'RateLimit']);
    // Each header (the shared ones by $ref to components.headers) states the pattern its value keeps to.
    for (const [name, header] of Object.entries(headers)) {
      const { pattern } = resolveIn(doc, header)?.schema as { pattern?: string };
      expect(file.headers.get(name), name).toMatch(new RegExp(pattern ?? '.'));
    }
    await call('POST', `${RS}/provider/fileservice/search`, 200, { body: { requestId: reqId, from: '2020-01-01' } });
    expect(violations).toEqual([]);
    expect(checked.size).toBe(23);

    // A misnamed or undocumented field in a real answer fails the strict document.
    const { eta, ...renamed } = tow.body as Json;
    const json = new Headers({ 'content-type': 'application/json' });
    expect(contract.check('POST', `${RS}/rescue/tow`, { status: 201, headers: json, body: { ...renamed, etaMinutes: eta } })[0]).toMatch(/must NOT have unevaluated properties \(etaMinutes\)/);
    const history = { ...done.body.serviceRequest, statusHistory: [{ ...done.body.serviceRequest.statusHistory[0], extra: 1 }] };
    expect(contract.check('GET', `${RS}/rescue/reqId/${reqId}`, { status: 200, headers: json, body: { serviceRequest: history } })[0]).toMatch(/must NOT have unevaluated properties \(extra\)/);
  }, 120_000);

  it('the Risk Index data sets', async () => {
    const at = `geometry=${encodeURIComponent('POINT(-87.6298 41.8781)')}&radius=0.02`;
    const answers: Record<string, Json> = {};
    for (const name of ['all', 'riskInfo', 'accidentSummary', 'farsInfo', 'realtimeTraffic', 'historicalTraffic']) {
      const res = await call('GET', `/riskIndex/v1/${name}?${at}${name === 'farsInfo' ? '&limit=3' : ''}`, 200, { token: null });
      expect(res.body.area.outsideCoverage).toBe(false);
      answers[name] = res.body;
    }
    const all = await call('GET', `/riskIndex/v1/all?${at}`, 200, { token: null });
    expect(all.body.riskInfo.riskiestCells.length).toBeGreaterThan(0);
    expect(all.body.farsInfo.records.length).toBeGreaterThan(0);
    await call('GET', `/riskIndex/v1/riskInfo?geometry=${encodeURIComponent('POINT(-40 35)')}`, 200, { token: null });
    expect(violations).toEqual([]);
    const riskInfo = answers.riskInfo.riskInfo as Json;
    expect(contract.check('GET', `/riskIndex/v1/riskInfo?${at}`, { status: 200, headers: new Headers({ 'content-type': 'application/json' }), body: { ...answers.riskInfo, riskInfo: { ...riskInfo, riskIndex: 3 } } }))
      .toEqual([expect.stringMatching(/riskInfo must NOT have unevaluated properties \(riskIndex\)/)]);
  }, 120_000);

  it('the MVR operations: a report as its component states it, the normalised summary, the score', async () => {
    const users = '/shared-mobility-insights/v2/users';
    await call('POST', users, 201, { token: t.token, body: { userID: 'shapes-mvr', dateOfBirth: '1988-02-11', homeZip: '60601' } });
    const ajv = new Ajv2020({ strict: false, allowUnionTypes: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'openapi:doc', components: doc.components });
    const validA = ajv.compile({ $ref: 'openapi:doc#/components/schemas/MvrSourceAReport' });
    expect(validA(sourceAFull())).toBe(true);
    expect(validA({ ...sourceAFull(), accidents: 'none' })).toBe(false);
    await call('POST', `${users}/shapes-mvr/sourceb-mvr`, 201, { token: t.token, body: sourceBFull() });
    const created = await call('POST', `${users}/shapes-mvr/sourcea-mvr`, 201, { token: t.token, body: sourceAFull() });
    expect(created.body.summary.violations[0]).toMatchObject({ category: 'SPEEDING', severityBasis: 'ACD' });
    await call('GET', `${users}/shapes-mvr/prequal-coverage-score`, 200, { token: t.token });
    expect(violations).toEqual([]);
  }, 120_000);

  it('a closed request body refuses a field it does not name with 400 naming it, as the document says', async () => {
    // The REST table's operations (the admin API checks its bodies on its own, behind an admin token).
    const closed = operationsOf(doc).filter(({ path, operation }) => {
      if (path.startsWith('/platform/admin/')) return false;
      const media = ((operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined)?.['application/json'];
      return isObject(media?.schema) && (media.schema as Json).additionalProperties === false;
    });
    expect(closed.length).toBeGreaterThan(35);
    for (const { method, path, operation } of closed) {
      const media = ((operation.requestBody as Json).content as Record<string, Json>)['application/json'];
      const url = path.replace(/\{[^}]+\}/g, '1HGCM82633A004352');
      const body = { ...(isObject(media.example) ? media.example : {}), unexpectedField: 1 };
      const res = await t.request(method.toUpperCase(), url, { token: path.startsWith(RS) ? token : t.token, body });
      expect([res.status, res.body.field], `${method} ${path}`).toEqual([400, 'unexpectedField']);
    }
    // the documented spellings pass the check: an alias is a named field
    const aliased = await t.request('POST', `${RS}/rescue/feedback`, { token, body: { reqId: 'no-such-rescue', rating: 5 } });
    expect(aliased.status).toBe(404);
    // a field of another service is not one of this service's fields: a battery call has no destination
    const battery = await t.request('POST', `${RS}/rescue/battery`, { token, body: { sessionId: 'x', disablementLocation: CHICAGO, batteryService: 'JUMP', destination: CHICAGO } });
    expect([battery.status, battery.body.field]).toEqual([400, 'destination']);
  }, 120_000);
});

