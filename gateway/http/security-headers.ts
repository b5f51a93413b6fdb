/**
 * Security headers (helmet's values) on every answer. JSON APIs and files get the strict default: nothing may
 * load, nothing may frame them. A page declares what it loads with `pageHeaders` in its route's
 * `config.securityHeaders` (or `reply.securityHeaders(...)` where it shares a route with an API); an image
 * meant to be embedded elsewhere uses `embeddableHeaders` (subgraphs/platform/rest/types.ts). Register
 * first, so that every later route and hook sees it.
 *
 * helmet's middleware is run once per set of options, on a recorder, instead of per request (as
 * @fastify/helmet does, rebuilding the middleware each time): the headers go onto the reply in one go,
 * where Fastify writes them with its own, instead of one `setHeader` each on the raw response. Only a
 * policy that names the request's host (`selfAndSameHostWebSockets`) is recorded per request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';
import type { RouteHeaders } from '../../subgraphs/platform/rest/types.ts';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';

type Directives = Record<string, Iterable<string | ((req: IncomingMessage) => string)>>;
type HeaderSet = Readonly<Record<string, string>>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** This route's security headers, over the API default. */
    securityHeaders?: RouteHeaders;
  }
  interface FastifyReply {
    /** Sets the security headers of `options` (over the API default) on this answer, over the API's already set. */
    securityHeaders(options: RouteHeaders): FastifyReply;
  }
}

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
/**
 * The API headers, for the few answers written before helmet's hooks can run (a URL Fastify cannot
 * route, a request Node's HTTP parser refuses).
 */
export const API_FALLBACK_HEADERS = {
  'content-security-policy': "default-src 'none';frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
} as const;

/** helmet's options for the API's answers (JSON, problem documents, files): the default every route starts from. */
const API_HEADERS: HelmetOptions = {
  contentSecurityPolicy: csp(API_CSP),
  frameguard: { action: 'deny' },
  // The gateway speaks plain HTTP (browsers ignore HSTS there); whoever terminates TLS in front of it
  // knows whether every subdomain is HTTPS, which includeSubDomains would assert.
  strictTransportSecurity: false,
};

const fromRequest = (options: HelmetOptions) => typeof options.contentSecurityPolicy === 'object'
  && Object.values(options.contentSecurityPolicy.directives ?? {}).some((sources) => sources && typeof sources === 'object' && [...sources].some((source) => typeof source === 'function'));

/**
 * The headers helmet sets for `options`: recorded once, or per request when the policy depends on it.
 * (helmet also removes X-Powered-By, which Fastify never sends.)
 */
function headerSet(options: HelmetOptions): (req: IncomingMessage) => HeaderSet {
  const middleware = helmet(options);
  const record = (req: IncomingMessage) => {
    const headers: Record<string, string> = {};
    const recorder = { setHeader: (name: string, value: string) => { headers[name.toLowerCase()] = value; }, removeHeader: () => {} };
    middleware(req, recorder as unknown as ServerResponse, (error?: unknown) => { if (error) throw error; });
    return headers;
  };
  if (fromRequest(options)) return record;
  const fixed = record({ headers: {} } as IncomingMessage);
  return () => fixed;
}

/** Each route's (and reply's) options, compiled once over the API default. */
const compiled = new WeakMap<RouteHeaders, (req: IncomingMessage) => HeaderSet>();
const over = (options: RouteHeaders) => {
  let set = compiled.get(options);
  if (!set) compiled.set(options, set = headerSet({ ...API_HEADERS, ...options } as HelmetOptions));
  return set;
};

/** The API's headers; also for an answer written on the raw response (a hijacked reply, which Fastify's headers do not reach). */
export const API_SECURITY_HEADERS = headerSet(API_HEADERS)({ headers: {} } as IncomingMessage);

async function securityHeaders(app: FastifyInstance) {
  // Over the API's headers already set, as helmet's middleware did on the raw response: a header the options leave out stays.
  app.decorateReply('securityHeaders', function (this: FastifyReply, options: RouteHeaders) {
    return this.headers(over(options)(this.request.raw));
  });
  app.addHook('onRoute', (route) => {
    // Compiled as the route is registered, not on its first request.
    if (route.config?.securityHeaders) over(route.config.securityHeaders);
  });
  app.addHook('onRequest', (request, reply, done) => {
    const options = request.routeOptions.config.securityHeaders;
    reply.headers(options ? over(options)(request.raw) : API_SECURITY_HEADERS);
    done();
  });
}

/** Register on the root instance before any route: `await app.register(securityHeadersPlugin)`. */
export const securityHeadersPlugin = fp(securityHeaders, { name: 'security-headers' });
