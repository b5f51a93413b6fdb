import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getVariableValues, parse, type OperationDefinitionNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ideBundle } from '../../gateway/ide/bundle.ts';
import { apiSchema, exampleErrors, packageFile, servedExamples } from '../../gateway/ide/index.ts';
import { ideExamples } from '../../gateway/ide/examples.ts';
import { subgraphList } from '../../schema/subgraphs.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const schema = apiSchema();
const composed = new Set(subgraphList().map((s) => s.name));
const operationOf = (query: string) => parse(query).definitions.filter((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');

describe('IDE example operations', () => {
  it('has one named operation per example, with unique names', () => {
    const names = ideExamples.map((e) => {
      const ops = operationOf(e.query);
      expect(ops, e.query).toHaveLength(1);
      expect(ops[0].name?.value, e.query).toBeTruthy();
      return ops[0].name!.value;
    });
    expect(new Set(names).size).toBe(names.length);
  });

  it('validates every example of a composed area, variables included, against the API schema', () => {
    const checked = ideExamples.filter((e) => composed.has(e.area));
    expect(checked.length).toBeGreaterThan(0);
    for (const example of checked) {
      expect(exampleErrors(schema, example), example.query).toEqual([]);
      const [op] = operationOf(example.query);
      const coerced = getVariableValues(schema, op.variableDefinitions ?? [], example.variables ?? {});
      expect(coerced.errors?.map((e) => e.message) ?? [], example.query).toEqual([]);
    }
  });

  it('has at least one example for every composed area and serves exactly the valid ones', () => {
    for (const area of composed) expect(ideExamples.some((e) => e.area === area), area).toBe(true);
    expect(servedExamples(schema)).toEqual(ideExamples.filter((e) => composed.has(e.area)));
  });

  it('drops an example that does not validate', () => {
    expect(exampleErrors(schema, { area: 'scoring', query: 'query Broken { noSuchField }' })).not.toEqual([]);
    expect(exampleErrors(schema, { area: 'scoring', query: 'query {' })[0]).toMatch(/Syntax Error/);
  });
});

describe('GraphiQL and the REST docs page over HTTP', () => {
  let t: TestStack;
  beforeAll(async () => { t = await startTestStack({ subgraphs: ['scoring'] }); });
  afterAll(async () => { await t?.close(); });

  it('serves GraphiQL at GET /graphql to a browser, with the examples as tabs and the token path to sign in at', async () => {
    const res = await t.request('GET', '/graphql', { headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = res.body as string;
    for (const file of ['ide.css', 'ide.js']) expect(html).toContain(`/ide/${file}`);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    const config = JSON.parse(/<script id="ide-config" type="application\/json">(.*?)<\/script>/s.exec(html)![1]) as { tabs: { query: string }[]; headers: string; tokenPath: string };
    expect(config.tabs.map((tab) => tab.query)).toEqual(servedExamples(schema).map((e) => e.query));
    expect(config).toMatchObject({ headers: '{}', tokenPath: '/platform/oauth/v1/token' });
    // Only this page lets Monaco inject its styles; scripts stay 'self'.
    const policy = String(res.headers.get('content-security-policy'));
    expect(policy).toContain("style-src 'self' 'unsafe-inline'");
    expect(policy).toContain("script-src 'self';");
    expect(policy).toContain("worker-src 'self'");
  });

  it('serves the bundle built from the installed packages, and the REST docs\' files, with their content types', async () => {
    const folder = await ideBundle();
    const cases: [string, string, RegExp][] = [
      ['/ide/ide.js', join(folder, 'ide.js'), /^text\/javascript/],
      ['/ide/ide.css', join(folder, 'ide.css'), /^text\/css/],
      ['/ide/graphql.worker.js', join(folder, 'graphql.worker.js'), /^text\/javascript/],
      ['/ide/editor.worker.js', join(folder, 'editor.worker.js'), /^text\/javascript/],
      ['/ide/json.worker.js', join(folder, 'json.worker.js'), /^text\/javascript/],
      ['/docs/assets/swagger-ui-bundle.js', packageFile('swagger-ui-dist', 'swagger-ui-bundle.js'), /^text\/javascript/],
      ['/docs/assets/swagger-ui.css', packageFile('swagger-ui-dist', 'swagger-ui.css'), /^text\/css/],
    ];
    for (const [path, file, type] of cases) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toMatch(type);
      expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(file)), path).toBe(true);
    }
    // Compressed for clients that accept gzip (GraphiQL and Monaco become about a quarter), plain otherwise.
    const size = readFileSync(join(folder, 'ide.js')).length;
    const gzipped = await fetch(`${t.url}/ide/ide.js`, { headers: { 'accept-encoding': 'gzip' } });
    expect(gzipped.headers.get('content-encoding')).toBe('gzip');
    expect(Number(gzipped.headers.get('content-length'))).toBeLessThan(size / 2);
    // Brotli, made with the bundle, for browsers (which all accept it).
    const br = await fetch(`${t.url}/ide/ide.js`, { headers: { 'accept-encoding': 'gzip, deflate, br, zstd' } });
    expect(br.headers.get('content-encoding')).toBe('br');
    expect(Number(br.headers.get('content-length'))).toBeLessThan(Number(gzipped.headers.get('content-length')));
    expect(Buffer.from(await br.arrayBuffer()).equals(readFileSync(join(folder, 'ide.js')))).toBe(true);
    const plain = await fetch(`${t.url}/ide/ide.js`, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(Number(plain.headers.get('content-length'))).toBe(size);
    for (const path of ['/ide/..%2Fpackage.json', '/ide/ide.map', '/ide/ide.js.br', '/ide/nothing.js', '/docs/assets/index.html']) {
      expect((await t.request('GET', path)).status, path).toBe(404);
    }
  });

  it('keeps JSON GraphQL over POST and GET working as before', async () => {
    const post = await t.graphql('query Probe { __typename }');
    expect(post).toMatchObject({ status: 200, data: { __typename: 'Query' } });
    const get = await t.request('GET', `/graphql?query=${encodeURIComponent('{ __typename }')}`, { headers: { accept: 'application/json', 'apollo-require-preflight': 'true' } });
    expect(get.status).toBe(200);
    expect(get.body).toEqual({ data: { __typename: 'Query' } });
    // A browser following a link with a query gets GraphQL, not the IDE.
    const linked = await t.request('GET', `/graphql?query=${encodeURIComponent('{ __typename }')}`, { headers: { accept: 'text/html', 'apollo-require-preflight': 'true' } });
    expect(linked.headers.get('content-type')).not.toMatch(/text\/html/);
    const json = await t.request('GET', '/graphql', { headers: { accept: 'application/json' } });
    expect(json.status).toBe(400);
    expect(String(json.headers.get('content-type'))).not.toMatch(/text\/html/);
  });

  it('serves the REST docs page for /openapi.json from local files', async () => {
    const res = await t.request('GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.body).toContain('/docs/assets/swagger-ui-bundle.js');
    expect(res.body).not.toMatch(/(src|href)="(https?:)?\/\//);
    // Swagger UI is started by a served file (the page's CSP runs no inline script).
    expect(res.body).toContain('<script src="/docs/assets/docs.js"></script>');
    const start = await t.request('GET', '/docs/assets/docs.js');
    expect(start.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(start.body).toContain("url: '/openapi.json'");
  });
});
