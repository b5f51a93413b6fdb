/**
 * GraphiQL at `GET /graphql` for a browser (Accept: text/html), from local files only: the UMD builds
 * of graphiql, react and react-dom in node_modules, served under /ide/. JSON GraphQL requests to
 * /graphql are untouched. The example operations are preloaded as tabs; the headers editor holds an
 * Authorization template for a token.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { printSchema, Supergraph } from '@apollo/federation-internals';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { buildSchema, parse, print, validate, type DirectiveDefinitionNode, type GraphQLSchema } from 'graphql';
import { supergraphPath } from '../../schema/subgraphs.ts';
import { TOKEN_PATH } from '../auth/token-route.ts';
import { pageHeaders, selfAndSameHostWebSockets } from '../http/security-headers.ts';
import { addVary } from '../http/vary.ts';
import { ideExamples, type IdeExample } from './examples.ts';

const require = createRequire(import.meta.url);

/** A file inside an installed package, also where the package's `exports` hide it (react's umd/). */
export const packageFile = (pkg: string, file: string) => join(dirname(require.resolve(`${pkg}/package.json`)), file);

/** Serves a file, read once and gzipped once when the client accepts it. */
export function assetSender() {
  const cache = new Map<string, { raw: Buffer; gzip?: Buffer }>();
  return (request: FastifyRequest, reply: FastifyReply, { path, type }: Asset) => {
    let entry = cache.get(path);
    if (!entry) {
      entry = { raw: readFileSync(path) };
      cache.set(path, entry);
    }
    addVary(reply.type(type).header('cache-control', 'public, max-age=86400'), 'Accept-Encoding');
    if (!/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? '')) || type.startsWith('image/')) return reply.send(entry.raw);
    entry.gzip ??= gzipSync(entry.raw);
    return reply.header('content-encoding', 'gzip').send(entry.gzip);
  };
}

/** A file the gateway serves: its path on disk and content type. */
export interface Asset { path: string; type: string }

export const JS = 'text/javascript; charset=utf-8';
export const CSS = 'text/css; charset=utf-8';

/** The files the page loads, by the name it asks for: the UMD builds in node_modules and the page's own start-up. */
const ASSETS: Record<string, Asset> = {
  'react.production.min.js': { path: packageFile('react', 'umd/react.production.min.js'), type: JS },
  'react-dom.production.min.js': { path: packageFile('react-dom', 'umd/react-dom.production.min.js'), type: JS },
  'graphiql.min.js': { path: packageFile('graphiql', 'graphiql.min.js'), type: JS },
  'graphiql.min.css': { path: packageFile('graphiql', 'graphiql.min.css'), type: CSS },
  'ide.js': { path: fileURLToPath(new URL('./page/ide.js', import.meta.url)), type: JS },
  'ide.css': { path: fileURLToPath(new URL('./page/ide.css', import.meta.url)), type: CSS },
};

export const IDE_ASSET_PREFIX = '/ide/';
/** GraphiQL's stylesheet embeds its fonts as data: URLs; queries go to this host, subscriptions to its WebSocket. */
const IDE_HEADERS = pageHeaders({ 'connect-src': [selfAndSameHostWebSockets], 'font-src': ['data:'] });
export const AUTHORIZATION_TEMPLATE = `Bearer <paste an access_token from POST ${TOKEN_PATH}>`;

/** The API schema clients see (the supergraph without the join/link machinery), with @defer as the gateway serves it. */
export function apiSchema(supergraphSdl = readFileSync(supergraphPath, 'utf8')): GraphQLSchema {
  // Through SDL: federation-internals is CommonJS and would hand back the other copy of graphql's classes.
  const api = Supergraph.build(supergraphSdl).apiSchema();
  return buildSchema(`${printSchema(api)}\n\n${print(api.deferDirective().toAST() as DirectiveDefinitionNode)}`);
}

/** Validation errors of one example against a schema (empty when it is valid). */
export const exampleErrors = (schema: GraphQLSchema, example: IdeExample): string[] => {
  try {
    return validate(schema, parse(example.query)).map((e) => e.message);
  } catch (error) {
    return [(error as Error).message];
  }
};

/** The examples the IDE serves: those valid against the schema (an area not composed yet has none). */
export const servedExamples = (schema: GraphQLSchema) => ideExamples.filter((e) => exampleErrors(schema, e).length === 0);

/** `</script>` inside inline JSON would end the script element. */
const inlineJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

export function idePage(examples: readonly IdeExample[]): string {
  const headers = JSON.stringify({ Authorization: AUTHORIZATION_TEMPLATE }, null, 2);
  const tabs = examples.map((e) => ({ query: e.query, variables: JSON.stringify(e.variables ?? {}, null, 2), headers }));
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GraphiQL · Fleet risk graph</title>
<link rel="stylesheet" href="${IDE_ASSET_PREFIX}graphiql.min.css">
<link rel="stylesheet" href="${IDE_ASSET_PREFIX}ide.css">
</head>
<body>
<div id="graphiql">Loading GraphiQL…</div>
<script id="ide-config" type="application/json">${inlineJson({ tabs, headers })}</script>
<script src="${IDE_ASSET_PREFIX}react.production.min.js"></script>
<script src="${IDE_ASSET_PREFIX}react-dom.production.min.js"></script>
<script src="${IDE_ASSET_PREFIX}graphiql.min.js"></script>
<script src="${IDE_ASSET_PREFIX}ide.js"></script>
</body>
</html>
`;
}

/** A browser asking for the page: GET, HTML accepted, no GraphQL query in the URL. */
export function wantsIde(request: FastifyRequest): boolean {
  if (request.method !== 'GET') return false;
  if (request.routeOptions.url !== '/graphql') return false;
  if ((request.query as Record<string, unknown>).query !== undefined) return false;
  return /\btext\/html\b/.test(String(request.headers.accept ?? ''));
}

async function ide(app: FastifyInstance) {
  // Built on the first IDE visit, not at start: building the API schema to check the examples takes ~0.2 s.
  let page: string | undefined;
  const send = assetSender();
  // A root onRequest hook answers before the token gate and Apollo's GET handler see the request.
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!wantsIde(request)) return;
    page ??= idePage(servedExamples(apiSchema()));
    // The page shares its route with JSON GraphQL over GET, which keeps the API's headers.
    reply.securityHeaders(IDE_HEADERS);
    addVary(reply, 'Accept');
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(page);
  });
  app.get<{ Params: { file: string } }>(`${IDE_ASSET_PREFIX}:file`, async (request, reply) => {
    const asset = ASSETS[request.params.file];
    if (!asset) return reply.callNotFound();
    return send(request, reply, asset);
  });
}

/** Register on the root instance: `await app.register(idePlugin)`. */
export const idePlugin = fp(ide, { name: 'graphiql-ide' });
