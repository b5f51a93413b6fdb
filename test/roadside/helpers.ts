import { DEFAULT_CLIENT, type TestStack } from '../support/stack.ts';

/** Whatever can call the gateway: a test stack, or a client of a gateway started elsewhere. */
type Caller = Pick<TestStack, 'request'> & Partial<Pick<TestStack, 'client'>>;

export const RS = '/services/roadside/v1';
/** Downtown Chicago (Willis Tower): inside the sample providers' coverage. */
export const CHICAGO = { latitude: 41.8789, longitude: -87.6359, address1: '233 S Wacker Dr', city: 'Chicago', state: 'IL', zip: '60606' };
/** Mid-Atlantic Ocean: no provider covers it. */
export const OCEAN = { latitude: 35, longitude: -40 };

/** A roadside token from the roadside token endpoint (HTTP Basic), by default for the stack's own client. */
export async function roadsideToken(
  t: Caller, id = (t.client ?? DEFAULT_CLIENT).id, secret = (t.client ?? DEFAULT_CLIENT).secret,
) {
  const res = await t.request('POST', `${RS}/oauth/accesstoken?grant_type=client_credentials`, {
    headers: { authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` },
  });
  return res;
}

let counter = 0;
/** Provisions a member with one asset and returns its keys. */
export async function provision(t: Caller, token: string, fields: Record<string, string> = {}) {
  counter += 1;
  const key = { partnerCode: 'ACME', memberId: `M-${Date.now().toString(36)}-${counter}`, assetIntegrationId: `A-${counter}` };
  const res = await t.request('POST', `${RS}/ars_provisioning_v1/formpost`, {
    token,
    form: {
      ...key, productType: 'PLUS', firstName: 'Dana', lastName: 'Reyes', address1: '1 N State St', city: 'Chicago', state: 'IL', zip: '60602',
      emailAddress: 'dana@example.com', phone: '+1 312 555 0199', companyName: 'Acme Fleet', make: 'honda', year: '2021',
      vin: `1HGCM82633A${String(100000 + counter).slice(-6)}`, effectiveEndDate: '2030-12-31', milesPerTow: '10', numberOfEvents: '4', partnerPay: 'N', serviceWeight: 'light',
      ...fields,
    },
  });
  if (res.status !== 201) throw new Error(`provisioning failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { ...key, vin: res.body.vin as string, body: res.body };
}

export async function session(t: Caller, token: string, benefits: { key: string; value: string }[], ppu = false) {
  const res = await t.request('POST', `${RS}/rescue/session`, {
    token, body: { appId: 'test-app', benefits, otherInfo: [{ key: 'ppuflag', value: ppu ? 'Y' : 'N' }] },
  });
  if (res.status !== 201) throw new Error(`session failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.sessionId as string;
}

export async function dispatch(t: Caller, token: string, sessionId: string, service = 'battery', extra: Record<string, unknown> = { batteryService: 'jump' }) {
  return t.request('POST', `${RS}/rescue/${service}`, { token, body: { sessionId, disablementLocation: CHICAGO, vehicle: { color: 'Blue' }, ...extra } });
}

export async function status(t: Caller, token: string, requestId: string, value: string, extra: Record<string, unknown> = {}) {
  return t.request('POST', `${RS}/rescue/statusUpdate`, { token, body: { requestId, status: value, ...extra } });
}
