import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CryptoKey } from 'jose';
import { issueToken, TOKEN_LIFETIME_SECONDS, type Scope } from '../../subgraphs/platform/auth/tokens.ts';
import { SECRET_QUERY_PARAM } from '../../subgraphs/platform/log.ts';
import type { ClientStore } from './clients.ts';
import { setLimitFields, type LimitState } from '../protection/ratelimit-fields.ts';

export const TOKEN_PATH = '/platform/oauth/v1/token';

/** Counts failed token attempts (gateway/protection/limits.ts): an attempt counts from its start and is given back when it succeeds. */
export interface AttemptLimiter {
  /**
   * Counts an attempt before its secret is checked: where it leaves the caller in each policy that
   * counted it, and the seconds to wait when the address is over a limit.
   */
  begin(ip: string, clientId: string | undefined):
    Promise<{ wait: number | null; states: readonly LimitState[] }>;
  /** The secret was right: the attempt is not a failure; where the caller stands then (none when unknown). */
  succeeded(ip: string, clientId: string): Promise<readonly LimitState[]>;
}

/** The limiter for one request, remembering where its attempt left the caller (the RateLimit fields). */
function recording(limit: AttemptLimiter | undefined) {
  let states: readonly LimitState[] = [];
  const limiter: AttemptLimiter | undefined = limit && {
    async begin(ip, clientId) {
      const counted = await limit.begin(ip, clientId);
      states = counted.states;
      return counted;
    },
    async succeeded(ip, clientId) {
      const after = await limit.succeeded(ip, clientId);
      if (after.length) states = after;
      return after;
    },
  };
  return { limiter, states: () => states };
}

export interface TokenDeps { clients: ClientStore; privateKey: CryptoKey; issuer: string; limit?: AttemptLimiter }

type OAuthError = 'invalid_request' | 'invalid_client' | 'unsupported_grant_type' | 'invalid_scope' | 'too_many_requests' | 'temporarily_unavailable';

export class TokenError extends Error {
  readonly error: OAuthError;
  readonly status: number;
  readonly retryAfter?: number;
  constructor(error: OAuthError, description: string, status = 400, retryAfter?: number) {
    super(description);
    this.error = error;
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

/** RFC 6749 2.3.1: credentials in HTTP Basic, each part form-urlencoded. */
function basicCredentials(header: string | undefined): { id: string; secret: string } | null {
  if (!header || !/^Basic\s/i.test(header)) return null;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new TokenError('invalid_client', 'malformed Basic credentials', 401);
  try {
    return { id: decodeURIComponent(decoded.slice(0, colon).replaceAll('+', ' ')), secret: decodeURIComponent(decoded.slice(colon + 1).replaceAll('+', ' ')) };
  } catch {
    throw new TokenError('invalid_client', 'malformed Basic credentials', 401);
  }
}

/** Longer values cannot belong to a client: refused before any lookup or hashing. */
const MAX_CLIENT_ID = 128;
const MAX_CLIENT_SECRET = 512;

/** A credential is text without NUL (PostgreSQL text cannot hold it): anything else is a malformed request, not a failed login. */
function checkText(name: string, value: string): string {
  if (value.includes('\u0000')) throw new TokenError('invalid_request', `${name} must not contain NUL (\\u0000) characters`);
  return value;
}

const field = (body: Record<string, unknown>, name: string): string | undefined => {
  const value = body[name];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new TokenError('invalid_request', `${name} must be a string`);
  return checkText(name, value);
};

/**
 * RFC 6749 2.3.1: client credentials "MUST NOT be included in the request URI" (URLs end up in
 * logs, proxies and histories). Refused with 400 before anything is checked.
 */
function refuseCredentialsInUrl(url: string | undefined) {
  const query = url?.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  if (!query) return;
  const names = [...new Set([...new URLSearchParams(query).keys()].filter((n) => n === 'client_id' || SECRET_QUERY_PARAM.test(n)))];
  if (names.length) {
    throw new TokenError('invalid_request', `${names.join(', ')} must not be sent in the query string: send client credentials in the form body or the Authorization header (HTTP Basic)`);
  }
}

export interface GrantRequest {
  body: unknown; authorization: string | undefined; ip: string;
  /** The request URL: credentials in its query string are refused. */
  url?: string;
  /** Query parameters read like body fields (the roadside endpoint's documented `?grant_type=`). */
  query?: Record<string, unknown>;
}

/** Client-credentials grant shared by both token endpoints; returns the caller and granted scopes. */
export async function grantClientCredentials(deps: TokenDeps, req: GrantRequest, defaultScopes?: (granted: Scope[]) => Scope[]) {
  if (req.body !== undefined && (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body))) {
    throw new TokenError('invalid_request', 'the body must be a form or a JSON object');
  }
  refuseCredentialsInUrl(req.url);
  const body = { ...(req.query ?? {}), ...((req.body ?? {}) as Record<string, unknown>) };
  const basic = basicCredentials(req.authorization);
  if (basic) {
    checkText('client_id', basic.id);
    checkText('client_secret', basic.secret);
  }
  const bodyId = field(body, 'client_id');
  const bodySecret = field(body, 'client_secret');
  if (basic && (bodySecret || (bodyId && bodyId !== basic.id))) {
    throw new TokenError('invalid_request', 'send client credentials either in the Authorization header or in the body, not both');
  }
  const grantType = field(body, 'grant_type');
  if (!grantType) throw new TokenError('invalid_request', 'grant_type is required');
  if (grantType !== 'client_credentials') throw new TokenError('unsupported_grant_type', 'only grant_type=client_credentials is supported');
  const clientId = basic?.id ?? bodyId;
  const clientSecret = basic?.secret ?? bodySecret;
  const wait = (await deps.limit?.begin(req.ip, clientId))?.wait;
  if (wait) throw new TokenError('too_many_requests', `too many token requests; retry in ${wait} s`, 429, wait);
  if (!clientId || !clientSecret) throw new TokenError('invalid_client', 'client_id and client_secret are required', 401);
  const client = clientId.length <= MAX_CLIENT_ID && clientSecret.length <= MAX_CLIENT_SECRET ? await deps.clients.authenticate(clientId, clientSecret) : null;
  if (!client) throw new TokenError('invalid_client', 'client authentication failed', 401);
  await deps.limit?.succeeded(req.ip, clientId);
  const allowed = client.scopes as Scope[];
  const requested = field(body, 'scope')?.split(' ').filter(Boolean);
  if (requested?.some((s) => !allowed.includes(s as Scope))) {
    throw new TokenError('invalid_scope', `this client may request only: ${allowed.join(' ')}`);
  }
  // The operator scope is granted only when asked for: an ordinary token never carries it.
  const scopes = (requested as Scope[] | undefined) ?? defaultScopes?.(allowed) ?? allowed.filter((s) => s !== 'admin');
  if (!scopes.length) throw new TokenError('invalid_scope', 'this client may request only: admin');
  const accessToken = await issueToken({ clientId, orgId: client.organisation, scopes, ...(client.sandbox ? { sandbox: true } : {}) }, client.secretGeneration, deps.privateKey, deps.issuer);
  return { accessToken, scopes, clientId };
}

/** Sends an RFC 6749 5.2 error; true when `error` was one. */
function sendTokenError(error: unknown, reply: FastifyReply, usedBasic: boolean): boolean {
  if (!(error instanceof TokenError)) return false;
  if (error.status === 401 && usedBasic) reply.header('www-authenticate', 'Basic realm="token"');
  if (error.retryAfter) reply.header('retry-after', String(error.retryAfter));
  reply.code(error.status).header('cache-control', 'no-store').send({ error: error.error, error_description: error.message });
  return true;
}

export type Grant = Awaited<ReturnType<typeof grantClientCredentials>>;

/** What distinguishes one token endpoint from another: its path, its defaults and the shape of its answer. */
export interface TokenRoute {
  path: string;
  /** Query parameters read like body fields (the roadside endpoint's documented `?grant_type=`). */
  readsQuery?: boolean;
  /** The scopes granted when the client asks for none (else every one but `admin`). */
  defaultScopes?: (granted: Scope[]) => Scope[];
  answer(grant: Grant): Record<string, unknown>;
}

/** The platform's endpoint: an RFC 6749 answer. */
const PLATFORM_TOKEN: TokenRoute = {
  path: TOKEN_PATH,
  answer: ({ accessToken, scopes }) => ({
    access_token: accessToken, token_type: 'Bearer', expires_in: TOKEN_LIFETIME_SECONDS, scope: scopes.join(' '),
  }),
};

/** A client-credentials token endpoint (by default the platform's). */
export function registerTokenRoute(app: FastifyInstance, deps: TokenDeps, route: TokenRoute = PLATFORM_TOKEN) {
  app.post(route.path, async (request: FastifyRequest, reply: FastifyReply) => {
    const counted = recording(deps.limit);
    try {
      const grant = await grantClientCredentials({ ...deps, limit: counted.limiter }, {
        body: request.body, authorization: request.headers.authorization, ip: request.ip, url: request.url,
        query: route.readsQuery ? request.query as Record<string, unknown> : undefined,
      }, route.defaultScopes);
      setLimitFields(reply, counted.states());
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(route.answer(grant));
    } catch (error) {
      setLimitFields(reply, counted.states());
      if (sendTokenError(error, reply, /^Basic\s/i.test(request.headers.authorization ?? ''))) return reply;
      throw error;
    }
  });
}
