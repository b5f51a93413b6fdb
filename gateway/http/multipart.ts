/** A media range of an Accept header: its type, its parameters (names lower-cased, values unquoted) and its q-value. */
export interface MediaRange { type: string; parameters: Record<string, string>; q: number }

/** An Accept header's media ranges (RFC 9110 12.5.1), quoted parameter values included; a malformed range is dropped. */
export function mediaRanges(accept: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const [range] of accept.matchAll(/(?:[^,"]|"(?:[^"\\]|\\.)*")+/g)) {
    const [type = '', ...rest] = range.split(/;(?=(?:[^"]|"(?:[^"\\]|\\.)*")*$)/);
    const parameters: Record<string, string> = {};
    for (const parameter of rest) {
      const eq = parameter.indexOf('=');
      if (eq > 0) parameters[parameter.slice(0, eq).trim().toLowerCase()] = parameter.slice(eq + 1).trim().replace(/^"(.*)"$/s, '$1').replace(/\\(.)/g, '$1');
    }
    const q = parameters.q === undefined ? 1 : Number(parameters.q);
    delete parameters.q;
    if (/^[\w.+*-]+\/[\w.+*-]+$/.test(type.trim()) && Number.isFinite(q)) ranges.push({ type: type.trim().toLowerCase(), parameters, q });
  }
  return ranges;
}

/** Types /graphql answers in one piece, and the ranges that cover them. */
const SINGLE = new Set(['application/json', 'application/graphql-response+json', 'application/*', '*/*']);

/**
 * Whether an Accept header asks for deferred fragments as multipart/mixed; deferSpec=20220824 parts rather
 * than one answer, parsed as media ranges with their parameters and q-values: a `multipart/mixed` range with
 * `deferSpec=20220824` or no spec parameter (Apollo Router and GraphiQL send it bare; `subscriptionSpec` asks
 * for something else), at a q-value above 0 and no lower than any JSON range's. A wildcard alone is one answer.
 */
export function acceptsIncremental(accept: string | null | undefined): boolean {
  if (!accept) return false;
  let multipart = 0;
  let single = 0;
  for (const { type, parameters, q } of mediaRanges(accept)) {
    const spec = Object.keys(parameters).filter((name) => name.endsWith('spec'));
    if (type === 'multipart/mixed' && spec.every((name) => name === 'deferspec') && (parameters.deferspec ?? '20220824') === '20220824') {
      multipart = Math.max(multipart, q);
    } else if (SINGLE.has(type)) {
      single = Math.max(single, q);
    }
  }
  return multipart > 0 && multipart >= single;
}

/** One JSON part and the delimiter after it: the CRLF that follows a delimiter opens the next part. */
const part = (boundary: string, json: string) =>
  `\r\ncontent-type: application/json; charset=utf-8\r\n\r\n${json}\r\n--${boundary}`;

/**
 * A multipart/mixed body of JSON parts (RFC 2046), each sent whole with the delimiter after it, so that a
 * client can act on a part without waiting for the next: the framing Apollo Server and Apollo Router use for
 * deferred fragments and multipart subscriptions. `parts` gives each part's JSON text and whether it is the
 * last; the body ends after the last one, or after the parts end: then with a closing part, `close`
 * (deferred fragments), or with none when `close` is null (a subscription's stream, which may end any time).
 */
export async function* multipartMixed(
  boundary: string, parts: AsyncIterable<{ json: string; last: boolean }>, close: string | null = '{}',
): AsyncGenerator<string> {
  yield `\r\n--${boundary}`;
  for await (const { json, last } of parts) {
    yield last ? `${part(boundary, json)}--\r\n` : part(boundary, json);
    if (last) return;
  }
  yield `${close === null ? '' : part(boundary, close)}--\r\n`;
}

/** The content type of a multipart/mixed body with that boundary and parameters (e.g. `deferSpec=20220824`). */
export const multipartContentType = (boundary: string, ...parameters: string[]) =>
  ['multipart/mixed', `boundary="${boundary}"`, ...parameters].join('; ');
