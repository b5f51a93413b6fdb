import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restRoutes } from '../../gateway/rest/index.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { countRows } from '../support/rows.ts';

/**
 * Property-based hostile input on every REST route: malformed and mistyped bodies, huge strings,
 * deep JSON, odd path parameters and query strings. No answer may be a 5xx, every error is
 * problem+json, and a route that refused every input wrote nothing.
 */
let t: TestStack;
beforeAll(async () => { t = await startTestStack(); }, 300_000);
afterAll(async () => { await t?.close(); });

const deepJson = (depth: number): unknown => (depth === 0 ? 'leaf' : { a: deepJson(depth - 1) });
const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('', ' ', '..', '%00', '\u0000', '\uFFFF', '😀', "' or 1=1 --", '<script>', 'null', 'undefined', '-1', '1e309', 'POINT(', 'x'.repeat(5000)),
);
const hostileValue = fc.oneof(hostileString, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(hostileString, { maxLength: 3 }));
const hostileBody = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.dictionary(fc.constantFrom('userId', 'userID', 'VIN', 'vin', 'deviceID', 'startTimestamp', 'estimatedEndTimestamp', 'actualEndTimestamp',
    'dateOfBirth', 'homeZip', 'enrollmentStatus', 'sessionId', 'requestId', 'status', 'latitude', 'longitude', 'rating', 'products', 'type',
    'granted', 'effectiveDate', 'newDeviceId', 'appId', 'benefits', 'disablementLocation', 'content', 'contentType', 'report_type', 'license'), hostileValue, { maxKeys: 6 })
    .map((v) => JSON.stringify(v)),
  fc.constantFrom('{', '{"a":', '[]', '"str"', '42', 'null', JSON.stringify(deepJson(500)), `{"pad":"${'y'.repeat(200_000)}"}`),
);
const hostileQuery = fc.dictionary(fc.constantFrom('geometry', 'wkt', 'radius', 'sessionId', 'appId', 'reqId', 'first', 'after', 'latitude', 'longitude', 'service', 'status'), hostileString, { maxKeys: 4 });

describe('hostile input on every REST route', () => {
  it('never answers 5xx, always problem+json on error, and writes nothing when it refuses', async () => {
    let requests = 0;
    let refused = 0;
    for (const route of restRoutes) {
      const before = await countRows(t.stack);
      let accepted = 0;
      await fc.assert(fc.asyncProperty(
        fc.array(hostileString, { minLength: 3, maxLength: 3 }), hostileBody, hostileQuery,
        async (params, body, query) => {
          let i = 0;
          const path = route.path.replace(/:[A-Za-z]+/g, () => encodeURIComponent(params[i++ % params.length] || 'x'));
          const qs = new URLSearchParams(query as Record<string, string>).toString();
          const withBody = route.method !== 'GET' && route.method !== 'DELETE';
          const res = await t.request(route.method, `${path}${qs ? `?${qs}` : ''}`, {
            token: t.token, ...(withBody ? { body, headers: { 'content-type': 'application/json' } } : {}),
          });
          requests += 1;
          expect(res.status, `${route.method} ${path} ${String(body).slice(0, 80)} -> ${JSON.stringify(res.body).slice(0, 200)}`).toBeLessThan(500);
          if (res.status >= 400) {
            refused += 1;
            expect(res.headers.get('content-type'), `${route.method} ${route.path}`).toMatch(/application\/problem\+json/);
            expect(typeof res.body.detail).toBe('string');
          } else {
            accepted += 1;
          }
        },
      ), { numRuns: 12, seed: 20261122 });
      if (accepted === 0) expect(await countRows(t.stack), `${route.method} ${route.path} wrote rows on refused input`).toEqual(before);
    }
    console.log(`hostile input: ${requests} requests over ${restRoutes.length} routes, ${refused} refused with problem+json, 0 answered 5xx`);
  }, 600_000);
});
