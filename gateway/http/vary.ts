import type { FastifyReply } from 'fastify';

/**
 * Adds a request header's name to the answer's `Vary` (RFC 9110 12.5.5), keeping the names already
 * there (`Origin`, set by CORS for every answer), once each, whatever their case; `*` stays alone.
 */
export function addVary(reply: FastifyReply, name: string): FastifyReply {
  const current = reply.getHeader('vary');
  const names = (Array.isArray(current) ? current.join(',') : String(current ?? '')).split(',').map((n) => n.trim()).filter(Boolean);
  if (names.some((n) => n === '*' || n.toLowerCase() === name.toLowerCase())) return reply;
  return reply.header('vary', [...names, name].join(', '));
}
