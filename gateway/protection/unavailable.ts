import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../subgraphs/platform/rest/problem.ts';

/** A request refused because the service cannot take it now: 503 problem+json with Retry-After. */
export class ServiceUnavailable extends Error {
  readonly statusCode = 503;
  readonly code = 'SERVICE_UNAVAILABLE';
  readonly retryAfter: number;
  constructor(message: string, retryAfter = UNAVAILABLE_RETRY_AFTER_SECONDS) {
    super(message);
    this.name = 'ServiceUnavailable';
    this.retryAfter = retryAfter;
  }
}
