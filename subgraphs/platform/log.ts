import { pino, type Logger, type LoggerOptions } from 'pino';
import type { Config } from './config.ts';

/**
 * Paths that may carry secrets or personal data; pino replaces their values before a line is
 * written. Request and response bodies are never logged at all.
 */
export const REDACT_PATHS = [
  'req.headers.authorization', 'req.headers.cookie', 'headers.authorization',
  '*.client_secret', '*.password', '*.dateOfBirth', '*.report', 'access_token',
];

export function loggerOptions(config: Config, name: string): LoggerOptions {
  return {
    name,
    level: config.NODE_ENV === 'test' && config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { service: name },
  };
}

export const createLogger = (config: Config, name: string): Logger => pino(loggerOptions(config, name));

export const REQUEST_ID_HEADER = 'x-request-id';
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Keeps a well-formed incoming request id (so one id follows a request across services), else makes one. */
export const requestIdFrom = (header: unknown): string =>
  typeof header === 'string' && REQUEST_ID_PATTERN.test(header) ? header : crypto.randomUUID();
