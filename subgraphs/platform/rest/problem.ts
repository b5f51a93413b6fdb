import type { FastifyReply } from 'fastify';
import type { GraphQLFormattedError } from 'graphql';
import { statusForCode } from '../errors.ts';

export const PROBLEM_TYPE = 'application/problem+json';

/** Seconds a client is asked to wait when the database or a subgraph is unavailable. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

const titles: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 408: 'Request Timeout', 409: 'Conflict',
  413: 'Content Too Large', 414: 'URI Too Long', 415: 'Unsupported Media Type', 422: 'Unprocessable Content', 429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  instance?: string;
  requestId?: string;
  errors?: { message: string; field?: string; code?: string }[];
  [extension: string]: unknown;
}

export function problem(status: number, code: string, detail: string, extra: Record<string, unknown> = {}): Problem {
  return { type: `urn:problem-type:${code.toLowerCase().replaceAll('_', '-')}`, title: titles[status] ?? 'Error', status, detail, code, ...extra };
}

/** The error's code; a subgraph outage already arrives as SERVICE_UNAVAILABLE from the gateway's data source. */
function codeOf(error: GraphQLFormattedError): string {
  const code = error.extensions?.code;
  return typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR';
}

/** The input at fault: set by our services, or read from GraphQL's own coercion message (`at "input.VIN"`). */
function fieldOf(error: GraphQLFormattedError): string | undefined {
  if (typeof error.extensions?.field === 'string') return error.extensions.field;
  const variable = /^Variable "\$(\w+)" got invalid value .*? at "([^"]+)"/.exec(error.message);
  if (variable) return variable[2];
  return /^Variable "\$(\w+)"/.exec(error.message)?.[1];
}

/** A problem from GraphQL errors: the first error decides the status; every error is listed. */
export function problemFromErrors(errors: readonly GraphQLFormattedError[]): Problem {
  const first = errors[0];
  const code = codeOf(first);
  const status = statusForCode(code);
  const extensions = { ...(first.extensions ?? {}) };
  delete extensions.code;
  delete extensions.serviceName;
  delete extensions.stacktrace;
  return problem(status, code, status >= 500 && status !== 503 ? 'Internal server error' : first.message, {
    ...extensions,
    ...(fieldOf(first) ? { field: fieldOf(first) } : {}),
    errors: errors.map((e) => ({ message: e.message, code: codeOf(e), ...(fieldOf(e) ? { field: fieldOf(e) } : {}) })),
  });
}

export function sendProblem(reply: FastifyReply, p: Problem) {
  if (typeof p.retryAfter === 'number') reply.header('retry-after', String(p.retryAfter));
  else if (p.status === 503 && !reply.hasHeader('retry-after')) reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
  return reply.code(p.status).type(PROBLEM_TYPE).send({ ...p, instance: reply.request.url.split('?')[0], requestId: reply.request.id });
}
