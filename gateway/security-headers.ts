/**
 * Security headers (helmet) on every answer. JSON APIs and files get the strict default: nothing may
 * load, nothing may frame them. A page declares what it loads with `pageHeaders` on its route (or
 * `reply.helmet(...)` where it shares a route with an API); an image meant to be embedded elsewhere
 * uses `embeddableHeaders`. Register first, so that every later route and hook sees it.
 */
import type { IncomingMessage } from 'node:http';
import helmet from '@fastify/helmet';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';

type Directives = Record<string, Iterable<string | ((req: IncomingMessage) => string)>>;
/** Helmet's options for one route (or `reply.helmet`), over the API default. */
export type RouteHeaders = NonNullable<Parameters<FastifyReply['helmet']>[0]>;

const NONE = ["'none'"];
const SELF = ["'self'"];

/** A Host header that names a host and port only (anything else could smuggle directives into the policy). */
const PLAIN_HOST = /^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

/**
 * `'self'` and WebSockets to the host the page was loaded from: CSP's 'self' does not match ws:/wss:
 * in every browser.
 */
export const selfAndSameHostWebSockets = (req: IncomingMessage) => {
  const host = req.headers.host ?? '';
  return PLAIN_HOST.test(host) ? `'self' ws://${host} wss://${host}` : "'self'";
};

const csp = (directives: Directives): RouteHeaders['contentSecurityPolicy'] => ({ useDefaults: false, directives });

/** Nothing loads, nothing frames: JSON, problem documents and served files. */
const API_CSP: Directives = { 'default-src': NONE, 'frame-ancestors': NONE };

/** What a page may do unless it says otherwise: scripts, styles, images and requests to its own origin only, no inline script or style. */
const PAGE_CSP: Directives = {
  'default-src': NONE,
  'script-src': SELF,
  'style-src': SELF,
  'img-src': SELF,
  'connect-src': SELF,
  'base-uri': NONE,
  'form-action': SELF,
  'frame-ancestors': NONE,
};

/** The headers of an HTML page that loads what `directives` add to (or replace in) the page default. */
export const pageHeaders = (directives: Directives = {}): RouteHeaders => ({ contentSecurityPolicy: csp({ ...PAGE_CSP, ...directives }) });

/**
 * An image (the Risk Index SVG map) that other sites may show, in <img> as in <iframe>/<object>:
 * loadable from any origin and frameable, but an SVG opened as a document runs no script and loads nothing.
 */
export const embeddableHeaders: RouteHeaders = {
  contentSecurityPolicy: csp({ 'default-src': NONE }),
  frameguard: false,
  crossOriginResourcePolicy: { policy: 'cross-origin' },
};

/**
 * The API headers, for the few answers written before helmet's hooks can run (a URL Fastify cannot
 * route, a request Node's HTTP parser refuses).
 */
export const API_FALLBACK_HEADERS = {
  'content-security-policy': "default-src 'none';frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
} as const;

async function securityHeaders(app: FastifyInstance) {
  await app.register(helmet, {
    contentSecurityPolicy: csp(API_CSP),
    frameguard: { action: 'deny' },
    // The gateway speaks plain HTTP (browsers ignore HSTS there); whoever terminates TLS in front of it
    // knows whether every subdomain is HTTPS, which includeSubDomains would assert.
    strictTransportSecurity: false,
  });
}

/** Register on the root instance before any route: `await app.register(securityHeadersPlugin)`. */
export const securityHeadersPlugin = fp(securityHeaders, { name: 'security-headers' });
