import type { IncomingHttpHeaders } from 'node:http';
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { LoggerOptions } from 'pino';
import { clientAppOf } from './client-app.ts';
import type { Config } from './config.ts';

/**
 * Paths that may carry secrets or personal data; pino replaces their values before a line is
 * written. Request and response bodies are never logged at all.
 */
export const REDACT_PATHS = [
  'req.headers.authorization', 'req.headers.cookie', 'headers.authorization',
  '*.client_secret', '*.password', '*.dateOfBirth', '*.report', 'access_token',
];

/** Query parameters whose values are credentials: masked wherever a URL is logged. */
export const SECRET_QUERY_PARAM = /secret|token|passw|pwd|api[-_]?key|^key$|^code$|^sig(nature)?$|assertion|credential|^auth/i;

const decodedName = (name: string) => {
  try {
    return decodeURIComponent(name.replaceAll('+', ' '));
  } catch {
    return name;
  }
};

/** The URL with the value of every credential-like query parameter replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const pairs = url.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    return eq >= 0 && SECRET_QUERY_PARAM.test(decodedName(pair.slice(0, eq))) ? `${pair.slice(0, eq)}=[redacted]` : pair;
  });
  return `${url.slice(0, q)}?${pairs.join('&')}`;
}

interface LoggedRequest { method: string; url: string; host?: string; ip?: string; socket?: { remotePort?: number }; headers?: IncomingHttpHeaders }

/** Fastify's request serializer, with credentials in the query string masked, and the app the request names (client awareness). */
const serializeRequest = (req: LoggedRequest) => {
  const { name, version } = clientAppOf(req.headers ?? {});
  return {
    method: req.method, url: redactUrl(req.url), host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort,
    ...(name ? { clientName: name } : {}), ...(version ? { clientVersion: version } : {}),
  };
};

export function loggerOptions(config: Config, name: string): LoggerOptions {
  return {
    name,
    level: config.NODE_ENV === 'test' && config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: { req: serializeRequest },
    base: { service: name },
  };
}

/**
 * Fastify's per-request lines, one at `info` instead of two: "request completed", written when the
 * answer has been sent, carries the request (method, URL with credentials masked, host, address)
 * with the status and time; "incoming request" moves to `debug`. Failures are logged as Fastify does.
 */
export class RequestLogController extends LogController {
  override incomingRequest(request: FastifyRequest) {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply) {
    if (error) super.requestCompleted(error, request, reply);
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}


export const REQUEST_ID_HEADER = 'x-request-id';
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Keeps a well-formed incoming request id (so one id follows a request across services), else makes one. */
export const requestIdFrom = (header: unknown): string =>
  typeof header === 'string' && REQUEST_ID_PATTERN.test(header) ? header : crypto.randomUUID();
