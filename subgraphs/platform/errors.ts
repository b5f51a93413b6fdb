import { GraphQLError } from 'graphql';

/** The error codes every subgraph and the REST layer share, with the HTTP status each maps to. */
export const errorStatus = {
  BAD_USER_INPUT: 400,
  GRAPHQL_VALIDATION_FAILED: 400,
  GRAPHQL_PARSE_FAILED: 400,
  COST_LIMIT_EXCEEDED: 400,
  RESPONSE_TOO_LARGE: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  /** A subscription resumed `after` an event the history does not hold for it (subscriptions' replay.ts). */
  EVENT_HISTORY_UNAVAILABLE: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  MISSING_DATA: 422,
  GEOMETRY_TOO_COMPLEX: 422,
  RATE_LIMITED: 429,
  INTERNAL_SERVER_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface ErrorDetails {
  /** The input field at fault, as a dotted path (e.g. `input.VIN`). */
  field?: string;
  [key: string]: unknown;
}

/** A domain error: thrown by services, carried to GraphQL as `extensions.code` and to REST as problem+json. */
export class AppError extends GraphQLError {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(message, { extensions: { code, ...details } });
    this.code = code;
  }
}

export const badInput = (message: string, field?: string, extra: ErrorDetails = {}) =>
  new AppError('BAD_USER_INPUT', message, { ...extra, ...(field ? { field } : {}) });
export const notFound = (what: string, id: string) => new AppError('NOT_FOUND', `${what} '${id}' was not found`, { resource: what, id });
export const conflict = (message: string, extra: ErrorDetails = {}) => new AppError('CONFLICT', message, extra);
export const unauthenticated = (message = 'A valid bearer token is required') => new AppError('UNAUTHENTICATED', message);
export const forbidden = (message: string) => new AppError('FORBIDDEN', message);

export const statusForCode = (code: unknown): number =>
  typeof code === 'string' && code in errorStatus ? errorStatus[code as ErrorCode] : 500;

/** PostgreSQL SQLSTATEs that mean "the caller collided with existing data". */
const uniqueViolation = '23505';
const exclusionViolation = '23P01';

/** True for a database error raised by a unique or exclusion constraint. */
export function isConstraintConflict(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code === uniqueViolation || code === exclusionViolation;
}
