/**
 * GraphiQL 5 at `GET /graphql` for a browser (Accept: text/html), from this server alone: the bundle of
 * bundle.ts (GraphiQL, its explorer plugin, Monaco and its workers) served under /ide/. JSON GraphQL
 * requests to /graphql are untouched. The example operations are preloaded as tabs; a Sign in panel
 * signs in at the organisations' OpenID providers that name the IDE's client id (providers.ts), or
 * fetches a token with an API client's id and secret; share links carry an operation in the fragment.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { printSchema, Supergraph } from '@apollo/federation-internals';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { buildSchema, parse, print, validate, type DirectiveDefinitionNode, type GraphQLSchema } from 'graphql';
import { supergraphPath } from '../../schema/subgraphs.ts';
import { TOKEN_PATH } from '../auth/token-route.ts';
import { pageHeaders, selfAndSameHostWebSockets } from '../http/security-headers.ts';
import { addVary } from '../http/vary.ts';
import { ideBundle } from './bundle.ts';
import type { TrustedIssuers } from '../auth/oidc/trusted-issuers.ts';
import type { AddressPolicy } from '../../subgraphs/platform/public-address.ts';
import { ideExamples, type IdeExample } from './examples.ts';
import { ideProviders, type IdeProvider } from './providers.ts';

const require = createRequire(import.meta.url);

/** A file inside an installed package, also where the package's `exports` hide it (react's umd/). */
export const packageFile = (pkg: string, file: string) => join(dirname(require.resolve(`${pkg}/package.json`)), file);

/**
 * Serves a file, read once: as its brotli copy (`<file>.br`, made with the bundle) to a client that
 * accepts br, else gzipped once when the client accepts gzip, else plain.
 */
export function assetSender() {
  const cache = new Map<string, { raw: Buffer; gzip?: Buffer; br?: Buffer | null }>();
  return (request: FastifyRequest, reply: FastifyReply, { path, type }: Asset) => {
    let entry = cache.get(path);
    if (!entry) {
      entry = { raw: readFileSync(path) };
      cache.set(path, entry);
    }
    addVary(reply.type(type).header('cache-control', 'public, max-age=86400'), 'Accept-Encoding');
    const accepted = String(request.headers['accept-encoding'] ?? '');
    if (type.startsWith('image/')) return reply.send(entry.raw);
    if (/\bbr\b/.test(accepted)) {
      entry.br ??= existsSync(`${path}.br`) ? readFileSync(`${path}.br`) : null;
      if (entry.br) return reply.header('content-encoding', 'br').send(entry.br);
    }
    if (!/\bgzip\b/.test(accepted)) return reply.send(entry.raw);
    entry.gzip ??= gzipSync(entry.raw);
    return reply.header('content-encoding', 'gzip').send(entry.gzip);
  };
}

/** A file the gateway serves: its path on disk and content type. */
export interface Asset { path: string; type: string }

export const JS = 'text/javascript; charset=utf-8';
export const CSS = 'text/css; charset=utf-8';

export const IDE_ASSET_PREFIX = '/ide/';
/**
 * Queries go to this host, subscriptions to its WebSocket, Monaco's workers are files of this host, and
 * a sign-in at a provider posts to that provider's token endpoint (`tokenOrigins`). Monaco injects its
 * styles at run time with no nonce: this page alone allows inline styles (never inline scripts).
 */
const ideHeaders = (tokenOrigins: readonly string[]) => pageHeaders({
  'connect-src': [selfAndSameHostWebSockets, ...tokenOrigins], 'worker-src': ["'self'"], 'font-src': ["'self'", 'data:'],
  'style-src': ["'self'", "'unsafe-inline'"], 'img-src': ["'self'", 'data:'],
});

/** The page's headers for a set of token endpoints, made again only when that set changes. */
function headersByOrigins() {
  let last = { key: '', headers: ideHeaders([]) };
  return (providers: readonly IdeProvider[]) => {
    const origins = [...new Set(providers.map((p) => new URL(p.tokenEndpoint).origin))].sort();
    if (origins.join(' ') !== last.key) last = { key: origins.join(' '), headers: ideHeaders(origins) };
    return last.headers;
  };
}

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

const tabsOf = (examples: readonly IdeExample[]) => examples.map((e) => ({ query: e.query, variables: JSON.stringify(e.variables ?? {}, null, 2) }));

export function idePage(examples: readonly IdeExample[], providers: readonly IdeProvider[] = []): string {
  const config = { tabs: tabsOf(examples), headers: '{}', tokenPath: TOKEN_PATH, assets: IDE_ASSET_PREFIX, providers };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GraphiQL · Fleet risk graph</title>
<link rel="stylesheet" href="${IDE_ASSET_PREFIX}ide.css">
</head>
<body>
<div id="graphiql">Loading GraphiQL…</div>
<script id="ide-config" type="application/json">${inlineJson(config)}</script>
<script src="${IDE_ASSET_PREFIX}ide.js"></script>
</body>
</html>
`;
}

/** The content type of a bundle file, by its extension; other files are not served. */
const BUNDLE_TYPES: Record<string, string> = { '.js': JS, '.css': CSS, '.ttf': 'font/ttf' };

/** A browser asking for the page: GET, HTML accepted, no GraphQL query in the URL. */
export function wantsIde(request: FastifyRequest): boolean {
  if (request.method !== 'GET') return false;
  if (request.routeOptions.url !== '/graphql') return false;
  if ((request.query as Record<string, unknown>).query !== undefined) return false;
  return /\btext\/html\b/.test(String(request.headers.accept ?? ''));
}

/** Where the IDE finds the providers it may offer. */
export interface IdeOptions { trustedIssuers: TrustedIssuers; policy: AddressPolicy }

async function ide(app: FastifyInstance, { trustedIssuers, policy }: IdeOptions) {
  // Checked on the first IDE visit, not at start: building the API schema to check the examples takes ~0.2 s.
  let examples: readonly IdeExample[] | undefined;
  const providers = ideProviders(trustedIssuers, policy, app.log);
  const headersFor = headersByOrigins();
  const send = assetSender();
  // A root onRequest hook answers before the token gate and Apollo's GET handler see the request.
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!wantsIde(request)) return;
    examples ??= servedExamples(apiSchema());
    const offered = await providers();
    // The page shares its route with JSON GraphQL over GET, which keeps the API's headers.
    reply.securityHeaders(headersFor(offered));
    addVary(reply, 'Accept');
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(idePage(examples, offered));
  });
  app.get<{ Params: { file: string } }>(`${IDE_ASSET_PREFIX}:file`, async (request, reply) => {
    const { file } = request.params;
    const type = BUNDLE_TYPES[extname(file)];
    const folder = await ideBundle();
    if (!type || !/^[\w.-]+$/.test(file) || !existsSync(join(folder, file))) return reply.callNotFound();
    return send(request, reply, { path: join(folder, file), type });
  });
}

/** Register on the root instance: `await app.register(idePlugin)`. */
export const idePlugin = fp(ide, { name: 'graphiql-ide' });
