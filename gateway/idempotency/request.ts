import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { Kind, parse, type ParseOptions } from 'graphql';
import { KEY_MAX } from './entity.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';

const PRINTABLE = /^[\x20-\x7e]+$/;

/**
 * The key of an `Idempotency-Key` header: a Structured Field string (`"…"`, as the IETF draft
 * writes it) or the bare value many clients send. 1 to 255 printable ASCII characters; null when
 * the header is malformed.
 */
export function parseIdempotencyKey(header: string | string[]): string | null {
  if (Array.isArray(header)) return null;
  let key = header.trim();
  if (key.startsWith('"')) {
    // sf-string: a closing quote, and backslash escapes only of `"` and `\`.
    const quoted = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/.exec(key);
    if (!quoted) return null;
    key = quoted[1].replace(/\\(["\\])/g, '$1');
  }
  return key.length >= 1 && key.length <= KEY_MAX && PRINTABLE.test(key) ? key : null;
}

/**
 * What makes two requests "the same": method, path with query, and the body (canonical JSON for a
 * parsed body, so key order and spacing do not matter; the text as sent for a raw one).
 */
export function requestFingerprint(method: string, url: string, body: unknown): string {
  const text = body === undefined || body === null ? '' : typeof body === 'string' ? body : canonicalize(body) ?? '';
  return createHash('sha256').update(`${method.toUpperCase()} ${url}\n`).update(text).digest('hex');
}

/** True when a POST /graphql body's document holds a mutation (a document that does not parse runs no mutation). */
export function hasMutation(body: unknown, options: ParseOptions): boolean {
  const query = (body as { query?: unknown } | null)?.query;
  if (typeof query !== 'string') return false;
  try {
    return parse(query, options).definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION && d.operation === 'mutation');
  } catch {
    return false;
  }
}
