/**
 * `Vary: Accept` on every answer whose representation follows Accept, merged with CORS's
 * `Vary: Origin`: GraphQL (application/json or application/graphql-response+json, over GET and POST,
 * and the gateway's own refusals), the IDE that shares GET /graphql, and the home page (HTML or JSON).
 * The Risk Index exports (CSV or GeoJSON): test/risk/csv-formulas.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.ts';

const APP = 'http://localhost:3000';

let t: TestStack;
beforeAll(async () => { t = await startTestStack({ subgraphs: [], env: { CORS_ORIGINS: APP } }); });
afterAll(async () => { await t?.close(); });

const vary = (res: Response) => (res.headers.get('vary') ?? '').toLowerCase().split(/\s*,\s*/).filter(Boolean);

describe('Vary: Accept', () => {
  it('on GraphQL answers over GET and POST, in either media type, and on the gateway\'s own refusals', async () => {
    const query = encodeURIComponent('{ __typename }');
    const answers = [
      await fetch(`${t.url}/graphql?query=${query}`, { headers: { origin: APP, accept: 'application/graphql-response+json' } }),
      await fetch(`${t.url}/graphql?query=${query}`, { headers: { origin: APP, accept: 'application/json' } }),
      await fetch(`${t.url}/graphql`, { method: 'POST', headers: { origin: APP, 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' }),
      await fetch(`${t.url}/graphql`, { method: 'POST', headers: { origin: APP, 'content-type': 'application/json', authorization: 'Bearer nonsense' }, body: '{}' }),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 401]);
    expect(answers[0]!.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
    expect(answers[1]!.headers.get('content-type')).toMatch(/^application\/json/);
    for (const res of answers) expect(vary(res), res.url).toEqual(expect.arrayContaining(['origin', 'accept']));
  });

  it('Vary: Accept-Encoding on the pages\' files (gzipped or not), Origin kept', async () => {
    for (const path of ['/ide/ide.js', '/ide/ide.css']) {
      const res = await fetch(`${t.url}${path}`, { headers: { origin: APP, 'accept-encoding': 'gzip' } });
      expect(res.status, path).toBe(200);
      expect(vary(res).sort(), path).toEqual(['accept-encoding', 'origin']);
    }
  });

  it('on the IDE page and the home page, once each, Origin kept', async () => {
    for (const path of ['/graphql', '/']) {
      for (const accept of ['text/html', 'application/json']) {
        const res = await fetch(`${t.url}${path}`, { headers: { origin: APP, accept } });
        expect(vary(res).sort(), `${path} ${accept}`).toEqual(['accept', 'origin']);
      }
    }
  });
});
