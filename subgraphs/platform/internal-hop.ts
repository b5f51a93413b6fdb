/**
 * The authenticated hop from the gateway to a subgraph that listens (docker compose, <NAME>_URL,
 * SUBGRAPH_TRANSPORT=http): the gateway signs every request with HMAC-SHA256 over
 * timestamp, method, path and query, request id and a SHA-256 digest of the body, with a key both
 * sides read from INTERNAL_HOP_KEY; a subgraph refuses anything else with 401 UNAUTHENTICATED.
 * Only the health probes stay open.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Transform } from 'node:stream';
import type { Fetcher, FetcherRequestInit } from '@apollo/utils.fetcher';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { REQUEST_ID_HEADER } from './log.ts';

export const INTERNAL_HOP_HEADER = 'x-internal-hop';
const OPEN_PATHS = new Set(['/healthz', '/readyz']);
const HEADER_PATTERN = /^t=(\d{1,12}),sig=([A-Za-z0-9_-]{43})$/;

/** A fresh key for a process whose gateway and subgraphs share nothing but memory (the local http opt-in). */
export const generateHopKey = () => randomBytes(32).toString('base64url');

const digest = (body: string | Buffer | undefined) => createHash('sha256').update(body ?? '').digest('hex');

function mac(key: string, timestamp: number, method: string, target: string, requestId: string, bodyDigest: string) {
  return createHmac('sha256', key).update(`${timestamp}\n${method.toUpperCase()}\n${target}\n${requestId}\n${bodyDigest}`).digest('base64url');
}

/** The header value for one request; `target` is the path with its query string. */
export function signHop(key: string, request: { method: string; target: string; requestId?: string; body?: string | Buffer; now?: number }) {
  const timestamp = Math.floor((request.now ?? Date.now()) / 1000);
  return `t=${timestamp},sig=${mac(key, timestamp, request.method, request.target, request.requestId ?? '', digest(request.body))}`;
}

/** A subgraph request's headers plus the signed hop header (the request id among them is signed too). */
export function signedHopHeaders(key: string, url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown }) {
  const headers = { ...init.headers };
  const target = new URL(url);
  const requestId = Object.entries(headers).find(([name]) => name.toLowerCase() === REQUEST_ID_HEADER)?.[1];
  const body = typeof init.body === 'string' || Buffer.isBuffer(init.body) ? init.body : undefined;
  headers[INTERNAL_HOP_HEADER] = signHop(key, { method: init.method ?? 'GET', target: target.pathname + target.search, requestId, body });
  return headers;
}

/** Wraps the gateway's fetcher so every subgraph request carries the signed hop header. */
export function signingFetcher<F extends Fetcher>(fetcher: F, key: string): F {
  const signed = (url: string, init: FetcherRequestInit = {}) =>
    fetcher(url, { ...init, headers: signedHopHeaders(key, url, { ...init, headers: init.headers as Record<string, string> | undefined }) });
  return Object.assign(signed, fetcher) as F;
}

type HopRequest = FastifyRequest & { hopBody?: ReturnType<typeof createHash>; hopClaim?: { timestamp: number; sig: string } };

const refuse = (reply: FastifyReply, message: string) =>
  reply.code(401).send({ errors: [{ message, extensions: { code: 'UNAUTHENTICATED' } }] });

/** Makes a subgraph's HTTP app accept only signed requests from the gateway (health probes excepted). */
export function requireInternalHop(app: FastifyInstance, key: string, maxSkewSeconds: number) {
  const open = (request: FastifyRequest) => OPEN_PATHS.has(request.routeOptions.url ?? '');
  app.addHook('onRequest', async (request: HopRequest, reply) => {
    if (open(request)) return;
    const header = request.headers[INTERNAL_HOP_HEADER];
    const match = typeof header === 'string' ? HEADER_PATTERN.exec(header) : null;
    if (!match) return refuse(reply, 'This service accepts requests from the gateway only (missing or malformed internal hop signature)');
    const timestamp = Number(match[1]);
    if (Math.abs(Date.now() / 1000 - timestamp) > maxSkewSeconds) return refuse(reply, 'Internal hop signature expired (clock skew beyond the allowed window)');
    request.hopClaim = { timestamp, sig: match[2] };
  });
  // The body is hashed as it streams in, before any parser sees it.
  app.addHook('preParsing', async (request: HopRequest, _reply, payload) => {
    if (!request.hopClaim) return payload;
    const hash = createHash('sha256');
    request.hopBody = hash;
    return payload.pipe(new Transform({ transform(chunk: Buffer, _encoding, done) { hash.update(chunk); done(null, chunk); } }));
  });
  app.addHook('preValidation', async (request: HopRequest, reply) => {
    const claim = request.hopClaim;
    if (!claim) return;
    const bodyDigest = request.hopBody?.digest('hex') ?? digest(undefined);
    const requestId = request.headers[REQUEST_ID_HEADER];
    const expected = Buffer.from(mac(key, claim.timestamp, request.method, request.url, typeof requestId === 'string' ? requestId : '', bodyDigest));
    const given = Buffer.from(claim.sig);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return refuse(reply, 'Invalid internal hop signature');
  });
}
