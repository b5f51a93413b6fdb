import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

const JSON_TYPE = /^application\/(?:json|problem\+json)\s*(?:;|$)/i;

/**
 * An `onSend` hook: JSON and problem+json answers end with a newline, so that each `curl` answer ends
 * its line in a shell (JSON parsers ignore the trailing whitespace). Added on the root instance before
 * any other `onSend` hook, so the Idempotency-Key store keeps, and replays, the bytes that were sent.
 * Streams and buffers (a replay, a file) go out as they are.
 */
export async function endJsonWithNewline(_request: FastifyRequest, reply: FastifyReply, payload: unknown) {
  if (typeof payload !== 'string' || payload.endsWith('\n')) return payload;
  const type = reply.getHeader('content-type');
  return typeof type === 'string' && JSON_TYPE.test(type) ? `${payload}\n` : payload;
}

/** Register on the root instance before any other `onSend` hook: `await app.register(jsonNewlinePlugin)`. */
export const jsonNewlinePlugin = fp(async (app: FastifyInstance) => {
  app.addHook('onSend', endJsonWithNewline);
}, { name: 'json-newline' });
