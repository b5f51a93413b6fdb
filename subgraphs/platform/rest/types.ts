import type { Scope } from '../auth/tokens.ts';
import type { HelmetOptions } from 'helmet';

/** helmet's options for one route, over the API's strict default (gateway/http/security-headers.ts). */
export type RouteHeaders = HelmetOptions;

/**
 * An answer meant to be embedded elsewhere (an image): nothing loads from it, any page may frame or fetch it.
 */
export const embeddableHeaders: RouteHeaders = {
  contentSecurityPolicy: { useDefaults: false, directives: { 'default-src': ["'none'"] } },
  frameguard: false,
  crossOriginResourcePolicy: { policy: 'cross-origin' },
};

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a route's mapping sees of an HTTP request. */
export interface RestRequest {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
  /** The request body text exactly as received; set only on routes with `rawBody: true`. */
  rawBody?: string;
}

/** A JSON Schema fragment for the OpenAPI document. */
export type JsonSchema = Record<string, unknown>;

/**
 * One documented REST path: which GraphQL operation it runs, how the request becomes variables and
 * how the result becomes the documented body. The OpenAPI document is generated from these rows.
 */
export interface RestRoute {
  method: HttpMethod;
  /** Fastify path syntax: `/shared-mobility-insights/v2/users/:userId`. */
  path: string;
  /** The original service's operation name, when it has one (e.g. getUser). */
  operationId: string;
  summary: string;
  tag: string;
  /** The scope the token must carry; `any` for any valid token (webhooks); null for public paths (the Risk Index). */
  scope: Scope | 'any' | null;
  /** A GraphQL document with exactly one named operation. */
  operation: string;
  variables: (req: RestRequest) => Record<string, unknown>;
  /** Turns `data` into the documented body; may throw (e.g. notFound for a null result). */
  result(data: Record<string, unknown>, req: RestRequest): unknown;
  /**
   * Receive the body unparsed, whatever its content type: `body` and `rawBody` are then the text
   * exactly as sent (for payloads that must be stored byte for byte, e.g. MVR reports).
   */
  rawBody?: boolean;
  /** The largest body it takes, in bytes, when not the gateway's default (1 MB); a larger one is 413. */
  bodyLimit?: number;
  /** Success status; 204 sends no body. */
  status?: number;
  /** Extra headers on success (e.g. content type of a file, the next page's link). */
  headers?(data: Record<string, unknown>, req: RestRequest): Record<string, string>;
  /**
   * HTTP caching of the success answer (gateway/rest/http-cache.ts): ETag, `public, max-age` and 304 on
   * If-None-Match when `when(data)` holds, else `no-store`; `no-store` always for live answers. `key`:
   * what the answer depends on in the request's variables, spelled canonically, so that with the data's
   * version known the tag is known before evaluation.
   */
  cache?: { maxAge: number; when(data: Record<string, unknown>): boolean; key?: (variables: Record<string, unknown>) => unknown } | 'no-store';
  /** The answer's representation follows the request's Accept header: every answer (304 included) says `Vary: Accept`. */
  negotiated?: boolean;
  /** Security headers other than the API's strict default (gateway/http/security-headers.ts), e.g. an image meant to be embedded. */
  securityHeaders?: RouteHeaders;
  /** For the OpenAPI document. */
  docs?: {
    description?: string;
    query?: Record<string, JsonSchema & { required?: boolean; description?: string }>;
    /** Path parameters' schemas and descriptions, by name (default: a plain string). */
    params?: Record<string, JsonSchema & { description?: string }>;
    requestBody?: JsonSchema;
    requestExample?: unknown;
    response?: JsonSchema;
    contentTypes?: string[];
    /** The request body's schema by media type, where it differs from `requestBody` (e.g. GeoJSON or CSV). */
    requestContent?: Record<string, JsonSchema>;
    /** The success body's media type when it is not JSON (e.g. image/svg+xml); its schema is then a string. */
    responseContentType?: string;
    /** The success body is stored bytes in one of these media types (e.g. a retrieved file): each documented as a binary string. */
    responseContentTypes?: readonly string[];
    /** The success body in one of several media types, each with its schema (e.g. an export as GeoJSON or CSV). */
    responseContent?: Record<string, JsonSchema>;
    /** Headers of the success response, by name (e.g. a file's checksum). */
    responseHeaders?: Record<string, { description: string; schema: JsonSchema }>;
    /** Problem responses beyond the ones every route documents, e.g. `{ 422: 'Data missing for a score' }`. */
    problems?: Record<number, string>;
  };
}

/**
 * The body of one webhook event type, for the OpenAPI document's `webhooks` section: its resource is
 * the answer of a documented REST read (`from`), or described whole (`resource`), plus what the event adds.
 */
export interface WebhookPayloadDoc {
  /** As bodies spell it: `rescue.status_changed`. */
  type: string;
  summary: string;
  /**
   * The REST read whose answer the resource is: its operationId; `member`, when the resource is one member
   * of that answer (`items` of it when that member is a list); `omit`, members the event never carries.
   */
  from?: { operationId: string; member?: string; items?: boolean; omit?: readonly string[] };
  /** The resource's schema, when it is no REST read's answer. */
  resource?: JsonSchema;
  /** Members the event adds to the resource, all present. */
  adds?: Record<string, JsonSchema>;
}
