import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, statusForCode } from '../../subgraphs/platform/errors.ts';
import { answersInGraphqlShape, sendGraphqlErrors } from './graphql-reply.ts';
import { problem, problemFromErrors, sendProblem } from '../../subgraphs/platform/rest/problem.ts';
import { ServiceUnavailable } from '../protection/unavailable.ts';

type RouteError = Error & { statusCode?: number; code?: string; validation?: unknown };

/** Unknown routes and thrown errors answered as problem documents (GraphQL errors on GraphQL endpoints). */
async function problemAnswers(app: FastifyInstance) {
  app.setNotFoundHandler((request, reply) => sendProblem(reply, problem(404, 'NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}`)));
  app.setErrorHandler((error: RouteError, request, reply) => {
    if (error instanceof ServiceUnavailable) {
      reply.header('retry-after', String(error.retryAfter));
      return sendProblem(reply, problem(503, error.code, error.message));
    }
    // Refused before a route ran (a body nested too deep): answered in the endpoint's own shape.
    if (error instanceof AppError) {
      return answersInGraphqlShape(request)
        ? sendGraphqlErrors(request, reply, statusForCode(error.code), [error.toJSON()])
        : sendProblem(reply, problemFromErrors([error.toJSON()]));
    }
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) {
      request.log.error({ err: { type: error.name, message: error.message, stack: error.stack } }, 'unhandled error');
      return sendProblem(reply, problem(500, 'INTERNAL_SERVER_ERROR', 'Internal server error'));
    }
    const code = status === 413 ? 'PAYLOAD_TOO_LARGE' : status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : status === 429 ? 'RATE_LIMITED' : 'BAD_USER_INPUT';
    return sendProblem(reply, problem(status, code, error.message));
  });
}

/** Register on the root instance before any route scope: scopes inherit the handlers present when they are created. */
export const problemAnswersPlugin = fp(problemAnswers, { name: 'problem-answers' });
