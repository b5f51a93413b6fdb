import { CHICAGO } from '../roadside/helpers.ts';
import type { TestStack } from './stack.ts';

let members = 0;

/** A GraphQL call on `t` that throws on any error. */
export const gqlOn = (t: TestStack) => async (query: string, variables: Record<string, unknown>, token = t.token) => {
  const res = await t.graphql(query, variables, token);
  if (res.errors) throw new Error(JSON.stringify(res.errors));
  return res.data;
};

/** A booked rescue of the token's organisation on `t` (with the roadside subgraph); returns its reqId. */
export async function bookedRescue(t: TestStack, token = t.token) {
  const gql = gqlOn(t);
  members += 1;
  const memberId = `SUB-${process.pid}-${members}`;
  await gql(`mutation($m: String!, $vin: String!) { provisionRescueMember(input: { partnerCode: "SUB", memberId: $m, assetIntegrationId: "car", productType: "basic", firstName: "Ana", lastName: "Ruiz",
    make: "TOYOTA", model: "Camry", year: 2020, vin: $vin, effectiveEndDate: "2031-01-31" }) { memberId } }`, { m: memberId, vin: `4T1B11HK5LU${String(100000 + members)}` }, token);
  const { startRescueSession: s } = await gql('mutation($m: String!) { startRescueSession(input: { appId: "sub-app", benefits: [{ key: "policy", value: $m }, { key: "partnerCode", value: "SUB" }] }) { sessionId } }', { m: memberId }, token);
  const { dispatchRescue: r } = await gql('mutation($s: ID!, $at: RescueLocationInput!) { dispatchRescue(service: GAS, input: { sessionId: $s, disablementLocation: $at, fuelType: REGULAR }) { reqId } }', { s: s.sessionId, at: CHICAGO }, token);
  return r.reqId as string;
}

/** Moves rescue `reqId` to `status` on `t`: one committed rescue event. */
export const updateRescue = (t: TestStack, reqId: string, status: string, token = t.token) =>
  gqlOn(t)('mutation($id: ID!, $st: RescueStatus!) { updateRescueStatus(input: { reqId: $id, status: $st, latitude: 41.88, longitude: -87.636 }) { status } }', { id: reqId, st: status }, token);
