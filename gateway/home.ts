/**
 * Where to go first: `GET /` answers a small page (JSON for a client that prefers it) linking the
 * IDE, the REST docs, the OpenAPI document, the health endpoints and the token endpoint; the start
 * output prints the same list (startBanner).
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import Negotiator from 'negotiator';
import type { IssuedCredentials } from './auth/clients.ts';
import { TOKEN_PATH } from './auth/token-route.ts';
import { DOCS_PATH } from './docs/index.ts';
import { pageHeaders } from './http/security-headers.ts';
import { addVary } from './http/vary.ts';

interface EntryPoint { label: string; path: string; post?: true }

/** The entry points, by the key the JSON answer names them with; all but the token endpoint open in a browser. */
export const ENTRY_POINTS: Record<string, EntryPoint> = {
  ide: { label: 'GraphQL IDE', path: '/graphql' },
  docs: { label: 'REST docs', path: DOCS_PATH },
  openapi: { label: 'OpenAPI document', path: '/openapi.json' },
  healthz: { label: 'Liveness', path: '/healthz' },
  readyz: { label: 'Readiness', path: '/readyz' },
  token: { label: 'Token endpoint (POST)', path: TOKEN_PATH, post: true },
};

export const NEW_DEVELOPMENT_CLIENT = 'npm run clients -- create --scopes b2b,roadside,admin';

const MEDIA_TYPES = ['text/html', 'application/json'];

const HOME_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Fleet risk graph</title>
</head>
<body>
<h1>Fleet risk graph</h1>
<p>One GraphQL graph over booking, scoring, roadside, registration and the Risk Index, and the documented REST paths on the same resolvers.</p>
<ul>
${Object.values(ENTRY_POINTS).map(({ label, path, post }) => (post ? `<li>${label}: <code>POST ${path}</code></li>` : `<li><a href="${path}">${label}</a>: <code>${path}</code></li>`)).join('\n')}
</ul>
<p>Every call but the Risk Index and the probes needs a token: <code>POST ${TOKEN_PATH}</code> with <code>grant_type=client_credentials</code>, your <code>client_id</code> and <code>client_secret</code>.
Another development client: <code>${NEW_DEVELOPMENT_CLIENT}</code>.</p>
</body>
</html>
`;

const HOME_JSON = { name: 'fleet-risk-graph', links: Object.fromEntries(Object.entries(ENTRY_POINTS).map(([key, { path }]) => [key, path])) };

const PAGE_HEADERS = pageHeaders();

async function home(app: FastifyInstance) {
  app.get('/', async (request, reply) => {
    addVary(reply, 'Accept').header('cache-control', 'no-cache');
    if (new Negotiator(request).mediaType(MEDIA_TYPES) === 'application/json') return HOME_JSON;
    reply.securityHeaders(PAGE_HEADERS);
    return reply.type('text/html; charset=utf-8').send(HOME_PAGE);
  });
}

/** Register on the root instance: `await app.register(homePlugin)`. */
export const homePlugin = fp(home, { name: 'home' });

/** The base URL to print for a listening address: a wildcard address prints as localhost. */
export function baseUrl(address: AddressInfo): string {
  const host = ['0.0.0.0', '::'].includes(address.address) ? 'localhost' : address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/** The development client's lines: a ready-to-paste export, shown once. */
export const developmentClientLines = (client: IssuedCredentials) =>
  `\nDevelopment client created (organisation '${client.organisation}', every scope including admin); the secret is shown only now:\n` +
  `  export CLIENT_ID=${client.clientId} CLIENT_SECRET=${client.clientSecret}\n` +
  `Another one later: ${NEW_DEVELOPMENT_CLIENT}\n`;

/** What `npm start` prints once listening: where everything is, and the new development client if one was made. */
export function startBanner(base: string, client?: IssuedCredentials): string {
  const width = Math.max(...Object.values(ENTRY_POINTS).map(({ label }) => label.length));
  const links = Object.values(ENTRY_POINTS).map(({ label, path }) => `  ${label.padEnd(width)}  ${base}${path}`);
  return `\nFleet risk graph listening on ${base}/\n${links.join('\n')}\n${client ? developmentClientLines(client) : ''}\n`;
}
