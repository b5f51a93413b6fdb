/**
 * What a browser app on another origin needs: CORS (`@fastify/cors`) for the origins in CORS_ORIGINS
 * on every path with the methods and headers of gateway/http/cors-policy.ts, preflights answered in a root
 * onRequest hook (before the token gate), and the CSRF rule for /graphql, which replaces Apollo
 * Server's (`csrfPrevention: false`).
 *
 * CSRF: the graph takes no ambient credential (no cookies; a bearer token is sent explicitly), and a
 * GET only runs queries (Apollo answers 405 to a mutation), so a cross-site GET can neither act for
 * a user nor read anything a token guards: GET queries need no preflight header. What a page could
 * still send without a preflight is a "simple" POST (form or text body), refused here as Apollo did.
 */
import cors from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../subgraphs/platform/config.ts';
import { CORS_EXPOSED_HEADERS, CORS_METHODS, CORS_REQUEST_HEADERS } from './cors-policy.ts';
import { sendGraphqlErrors } from './graphql-reply.ts';

/** Content types a browser sends cross-origin without a preflight (Fetch standard, CORS-safelisted). */
const SIMPLE_CONTENT_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain']);

const essence = (contentType: string | undefined) => (contentType ?? '').split(';')[0]!.trim().toLowerCase();

// The routed path: `/%67raphql` and `/graphql/` are `/graphql` (a raw-URL test let them through).
const isSimplePost = (request: FastifyRequest) => request.method === 'POST' && request.routeOptions.url === '/graphql'
  && SIMPLE_CONTENT_TYPES.has(essence(request.headers['content-type']));

async function browserAccess(app: FastifyInstance, { config }: { config: Config }) {
  await app.register(cors, {
    origin: config.CORS_ORIGINS,
    methods: Object.keys(CORS_METHODS),
    allowedHeaders: Object.keys(CORS_REQUEST_HEADERS),
    exposedHeaders: Object.keys(CORS_EXPOSED_HEADERS),
    // A browser may reuse a preflight for 10 minutes (Chromium's cap is 2 hours).
    maxAge: 600,
  });
  app.addHook('onRequest', async (request, reply) => {
    if (!isSimplePost(request)) return;
    return sendGraphqlErrors(request, reply, 400, [{
      message: 'This operation has been blocked as a potential Cross-Site Request Forgery (CSRF): POST /graphql with Content-Type: application/json',
      extensions: { code: 'BAD_REQUEST' },
    }]);
  });
}

/** Register on the root instance, before the routes: `await app.register(browserAccessPlugin, { config })`. */
export const browserAccessPlugin = fp(browserAccess, { name: 'browser-access' });
