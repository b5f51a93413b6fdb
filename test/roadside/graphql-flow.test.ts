import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestStack } from '../support/shared-stack.ts';
import { TEST_HOP_KEY, type TestStack } from '../support/stack.ts';
import { INTERNAL_HOP_HEADER, signHop } from '../../subgraphs/platform/internal-hop.ts';
import { callerOf, internalBearer } from '../support/internal-token.ts';
import { loadReferenceData } from '../../subgraphs/roadside/data/load.ts';
import { VehicleModel } from '../../subgraphs/roadside/entities.ts';
import { CHICAGO, roadsideToken } from './helpers.ts';

let t: TestStack;
let token: string;
let firstReqId = '';

beforeAll(async () => {
  t = await sharedTestStack({ subgraphs: ['roadside'] });
  token = (await roadsideToken(t)).body.access_token;
});
afterAll(async () => { await t?.close(); });

const gql = async (query: string, variables?: Record<string, unknown>) => {
  const res = await t.graphql(query, variables, token);
  if (res.errors) throw new Error(JSON.stringify(res.errors));
  return res.data;
};

describe('a whole rescue through GraphQL', () => {
  it('provisions, starts a session, prices, dispatches, tracks to completion, rates and files', async () => {
    const provisioned = await gql(`mutation { provisionRescueMember(input: {
      partnerCode: "GQL", memberId: "G-1", assetIntegrationId: "car-1", productType: "basic", firstName: "Lee", lastName: "Chen",
      make: "TOYOTA", model: "Camry", year: 2020, vin: "4T1B11HK5LU000001", effectiveEndDate: "2031-01-31" }) { memberId productType status vin } }`);
    expect(provisioned.provisionRescueMember).toEqual({ memberId: 'G-1', productType: 'BASIC', status: 'Active', vin: '4T1B11HK5LU000001' });

    const { startRescueSession: s } = await gql(`mutation { startRescueSession(input: { appId: "gql-app", benefits: [{ key: "policy", value: "G-1" }, { key: "partnerCode", value: "GQL" }] }) { sessionId memberId payPerUse } }`);
    expect(s).toMatchObject({ memberId: 'G-1', payPerUse: false });

    const benefits = await gql('query($s: ID!) { rescueBenefits(sessionId: $s, appId: "gql-app") { status maxClaimCount usageCount towMiles services { service type claimCount maxClaimCount } } }', { s: s.sessionId });
    expect(benefits.rescueBenefits).toMatchObject({ status: 'Active', maxClaimCount: 3, usageCount: 0, towMiles: 5 });

    const quote = await gql(`mutation($s: ID!, $at: RescueLocationInput!) { quoteRescue(input: { sessionId: $s, service: GAS, disablementLocation: $at }) { service totalCost coveredAmount customerPays covered } }`, { s: s.sessionId, at: CHICAGO });
    // Gas: $60 service fee + 2 gallons (BASIC plan) at $5, all covered.
    expect(quote.quoteRescue).toEqual({ service: 'GAS', totalCost: 70, coveredAmount: 70, customerPays: 0, covered: true });

    const { dispatchRescue: r } = await gql(`mutation($s: ID!, $at: RescueLocationInput!) { dispatchRescue(service: GAS, input: { sessionId: $s, disablementLocation: $at, fuelType: PREMIUM }) {
      reqId status service details { fuelType } vehicle { make model year vin } customer { firstName } provider { providerId services } etaMinutes cost { totalCost customerPays } } }`, { s: s.sessionId, at: CHICAGO });
    expect(r).toMatchObject({ status: 'BOOKED', service: 'GAS', details: { fuelType: 'PREMIUM' }, vehicle: { make: 'Toyota', model: 'Camry', year: 2020 }, customer: { firstName: 'Lee' }, provider: { providerId: 'CHI-01' } });
    // The provider is read as a plain row (roadside/loaders.ts): its list of services is a list, as hydrated.
    expect(r.provider.services).toContain('GAS');
    expect(r.etaMinutes).toBeGreaterThan(15);
    firstReqId = r.reqId;

    for (const status of ['EN_ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED']) {
      const { updateRescueStatus } = await gql('mutation($id: ID!, $st: RescueStatus!) { updateRescueStatus(input: { reqId: $id, status: $st, latitude: 41.88, longitude: -87.636 }) { status message rescue { status } } }', { id: r.reqId, st: status });
      expect(updateRescueStatus).toMatchObject({ status: 'OK', rescue: { status } });
    }
    const fb = await gql('mutation($id: ID!) { submitRescueFeedback(reqId: $id, rating: 4, comment: "ok") { rating comment } }', { id: r.reqId });
    expect(fb.submitRescueFeedback).toEqual({ rating: 4, comment: 'ok' });

    const text = 'receipt: $70.00 — paid ✓';
    const { uploadProviderFile: f } = await gql('mutation($id: ID!, $c: String!) { uploadProviderFile(input: { reqId: $id, fileType: "RECEIPT", fileName: "r.txt", contentType: "text/plain; charset=utf-8", contentBase64: $c }) { contentId memberId size sha256 } }',
      { id: r.reqId, c: Buffer.from(text).toString('base64') });
    expect(f).toMatchObject({ memberId: 'G-1', size: Buffer.byteLength(text) });

    const full = await gql(`query($id: ID!) { rescue(reqId: $id) { status etaMinutes statusHistory { status position { latitude } } feedback { rating }
      files { contentId contentType contentBase64 } } providerFiles(filter: { reqId: $id }) { contentId } }`, { id: r.reqId });
    expect(full.rescue.status).toBe('COMPLETED');
    expect(full.rescue.etaMinutes).toBeNull();
    expect(full.rescue.statusHistory.map((e: { status: string }) => e.status)).toEqual(['BOOKED', 'EN_ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED']);
    expect(full.rescue.feedback).toEqual({ rating: 4 });
    expect(full.rescue.files).toEqual([{ contentId: f.contentId, contentType: 'text/plain', contentBase64: Buffer.from(text).toString('base64') }]);
    expect(full.providerFiles).toEqual([{ contentId: f.contentId }]);

    const after = await gql('query($s: ID!) { rescueBenefits(sessionId: $s) { usageCount services { type claimCount } } }', { s: s.sessionId });
    expect(after.rescueBenefits.usageCount).toBe(1);
    expect(after.rescueBenefits.services.find((x: { type: string }) => x.type === 'Gas').claimCount).toBe(1);
  });

  it('answers the reference queries and resolves RescueRequest as an entity', async () => {
    const data = await gql(`{ vehicleMakes vehicleModels(make: "mercedes-benz") { make models }
      towLocations(latitude: 41.8789, longitude: -87.6359, radiusMiles: 5) { locationId distanceMiles type }
      rescueAvailability(latitude: 41.8789, longitude: -87.6359, services: [TOW, LOCKOUT]) { available services { service available providerCount } } }`);
    expect(data.vehicleMakes).toContain('Toyota');
    expect(data.vehicleMakes).toEqual([...data.vehicleMakes].sort((a: string, b: string) => a.toLowerCase().localeCompare(b.toLowerCase())));
    expect(data.vehicleModels.make).toBe('Mercedes-Benz');
    expect(data.vehicleModels.models).toContain('GLC');
    const distances = data.towLocations.map((l: { distanceMiles: number }) => l.distanceMiles);
    expect(distances).toEqual([...distances].sort((a, b) => a - b));
    expect(data.towLocations[0].locationId).toBe('TL-CHI-01');
    expect(data.rescueAvailability.available).toBe(true);
    expect(data.rescueAvailability.services[0]).toMatchObject({ service: 'TOW', available: true });
    expect(data.rescueAvailability.services[0].providerCount).toBeGreaterThanOrEqual(2);

    // Loading the reference data again (as every start does) changes nothing.
    const sub0 = t.stack.subgraphs.find((x) => x.name === 'roadside')!;
    const count = () => sub0.db.orm.em.fork().count(VehicleModel, {});
    const before = await count();
    const loaded = await loadReferenceData(sub0.db.orm.em.fork());
    expect(await count()).toBe(before);
    expect(loaded.models).toBe(before);

    // The subgraph resolves RescueRequest references (through its loader), scoped to the caller.
    const sub = t.stack.subgraphs.find((x) => x.name === 'roadside');
    const payload = JSON.stringify({ query: 'query($r: [_Any!]!) { _entities(representations: $r) { ... on RescueRequest { reqId status } } }', variables: { r: [{ __typename: 'RescueRequest', reqId: firstReqId }, { __typename: 'RescueRequest', reqId: 'nope' }] } });
    const res = await sub!.app.inject({
      method: 'POST', url: '/graphql', payload,
      headers: { authorization: await internalBearer(t.config, 'roadside', callerOf(token)), 'content-type': 'application/json', [INTERNAL_HOP_HEADER]: signHop(TEST_HOP_KEY, { method: 'POST', target: '/graphql', body: payload }) },
    });
    expect(res.json().data._entities).toEqual([{ reqId: firstReqId, status: 'COMPLETED' }, null]);
    // A subgraph's answers are never stored by a cache between it and the gateway.
    expect(res.headers['cache-control']).toBe('no-store');
  });
});
