import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Caller } from '../../subgraphs/platform/auth/tokens.ts';
import { AppError, badInput, forbidden, unauthenticated } from '../../subgraphs/platform/errors.ts';
import { problemFromErrors, sendProblem } from '../../subgraphs/platform/rest/problem.ts';
import { securityFor } from '../rest/openapi-security.ts';

function requireAdmin(request: FastifyRequest): Caller {
  const caller = (request as FastifyRequest & { caller?: Caller | null }).caller;
  if (!caller) throw unauthenticated();
  if (!caller.scopes.includes('admin')) throw forbidden("The access token lacks the 'admin' scope (request it with scope=admin, as an operator client)");
  return caller;
}

/** An admin route's handler: operators only (the `admin` scope); AppErrors answer as problems. */
export const adminHandler = (handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>) =>
  async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      requireAdmin(request);
      return await handler(request, reply);
    } catch (error) {
      if (error instanceof AppError) return sendProblem(reply, problemFromErrors([error.toJSON()]));
      throw error;
    }
  };

/** A body (or query) checked against `schema`; the first issue is a 400 naming its field. */
export function parseInput<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw badInput(`${issue.path.join('.') || 'body'}: ${issue.message}`, issue.path.join('.') || undefined);
  }
  return parsed.data;
}

/** A path parameter naming a stored row: 1 to 128 printable ASCII characters. */
export function idParam(request: FastifyRequest, name: string): string {
  const parsed = z.string().min(1).max(128).regex(/^[\x21-\x7e]+$/, `${name} must be printable ASCII`)
    .safeParse((request.params as Record<string, string>)[name]);
  if (!parsed.success) throw badInput(parsed.error.issues[0]!.message, name);
  return parsed.data;
}

/** The OpenAPI pieces every admin path shares. */
export const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } });
export const adminErrors = {
  401: problem('Missing, invalid or expired token'), 403: problem("Token lacks the 'admin' scope"), 414: problem('A URL over 16 KiB'), 429: problem('Rate limit exceeded (see Retry-After)'),
  431: problem('Request line and headers over 16 KiB'), 503: problem('The database is unavailable or the service is overloaded (see Retry-After)'),
};
export const adminBodyErrors = { 400: problem('Invalid input'), 413: problem('Request body too large'), 415: problem('Unsupported content type (accepted: application/json)') };
export const adminSecurity = securityFor('admin');
