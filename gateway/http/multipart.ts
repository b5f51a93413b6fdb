import Negotiator from 'negotiator';

/** The incremental delivery format of the 2022-08-24 defer proposal (Apollo Client 4's Defer20220824Handler, Apollo Router). */
export const DEFER_SPEC_20220824 = 'multipart/mixed; deferSpec=20220824';

/** What /graphql answers in one piece (as Apollo Server: the first is the default). */
const SINGLE = ['application/json', 'application/graphql-response+json'];

/**
 * Whether an Accept header asks for deferred fragments as multipart/mixed; deferSpec=20220824 parts rather
 * than one answer: parsed as media ranges with their parameters and q-values (negotiator), the multipart type
 * must be preferred over both JSON types. `multipart/mixed` without parameters counts, as Apollo Router has it.
 */
export function acceptsIncremental(accept: string | null | undefined): boolean {
  if (!accept) return false;
  return new Negotiator({ headers: { accept } }).mediaType([DEFER_SPEC_20220824, ...SINGLE]) === DEFER_SPEC_20220824;
}

const part = (boundary: string, json: string, last: boolean) =>
  `content-type: application/json; charset=utf-8\r\n\r\n${json}\r\n--${boundary}${last ? '--' : ''}\r\n`;

/**
 * A multipart/mixed body of JSON parts (RFC 2046), each sent whole with the delimiter after it, so that a
 * client can act on a part without waiting for the next: the framing Apollo Server and Apollo Router use for
 * deferred fragments and multipart subscriptions. `parts` gives each part's JSON text and whether it is the
 * last; the body ends after the last one, or after the parts end (then with an empty closing part, `close`).
 */
export async function* multipartMixed(boundary: string, parts: AsyncIterable<{ json: string; last: boolean }>, close = '{}'): AsyncGenerator<string> {
  yield `\r\n--${boundary}\r\n`;
  for await (const { json, last } of parts) {
    yield part(boundary, json, last);
    if (last) return;
  }
  yield part(boundary, close, true);
}

/** The content type of a multipart/mixed body with that boundary and parameters (e.g. `deferSpec=20220824`). */
export const multipartContentType = (boundary: string, ...parameters: string[]) =>
  ['multipart/mixed', `boundary="${boundary}"`, ...parameters].join('; ');
