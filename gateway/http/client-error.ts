import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { problem, PROBLEM_TYPE } from '../../subgraphs/platform/rest/problem.ts';
import { API_FALLBACK_HEADERS } from './security-headers.ts';

type ClientError = Error & { code?: string; rawPacket?: unknown };

/** Status and code for an error Node's HTTP parser raised before any route was involved. */
function classify(error: ClientError): { status: number; code: string; detail: string } {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, code: 'REQUEST_TIMEOUT', detail: 'The request was not received in time' };
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    // The parser counts the request line with the headers; a chunk that overflowed before the line ended means the URL alone is too long.
    const lineEnded = !Buffer.isBuffer(error.rawPacket) || error.rawPacket.includes('\r\n');
    return lineEnded
      ? { status: 431, code: 'REQUEST_HEADER_FIELDS_TOO_LARGE', detail: 'The request line and headers are larger than the server accepts (16 KiB)' }
      : { status: 414, code: 'URI_TOO_LONG', detail: 'The URL (path and query string) is longer than the server accepts (16 KiB)' };
  }
  return { status: 400, code: 'BAD_REQUEST', detail: 'Malformed HTTP request' };
}

/**
 * Fastify's `clientErrorHandler`: requests the HTTP parser refuses (request line or headers over
 * Node's maxHeaderSize, malformed syntax, timeouts) are answered as problem+json like every other
 * refusal, then the connection is closed.
 */
export function clientErrorHandler(this: { log: FastifyBaseLogger }, error: ClientError, socket: Socket) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, code, detail } = classify(error);
  this.log.debug({ err: { code: error.code, message: error.message } }, 'client error');
  if (socket.writable) {
    const body = `${JSON.stringify(problem(status, code, detail))}\n`;
    const security = Object.entries(API_FALLBACK_HEADERS).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${PROBLEM_TYPE}\r\n${security}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(error);
}
