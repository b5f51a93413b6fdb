/** One media range of an Accept header: `type/subtype`, its parameters (names lower-cased, values unquoted) and weight. */
export interface MediaRange { type: string; params: Record<string, string>; q: number }

/** Splits on `separator` outside double-quoted strings. */
function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i]!;
    if (ch === '\\' && quoted) {
      current += ch + (text[i + 1] ?? '');
      i += 1;
    } else if (ch === '"') {
      quoted = !quoted;
      current += ch;
    } else if (ch === separator && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

const unquote = (value: string) => (value.length >= 2 && value.startsWith('"') && value.endsWith('"')
  ? value.slice(1, -1).replace(/\\(.)/g, '$1') : value);

/** An Accept header's media ranges as RFC 9110 writes them (at most 32 are read: a header is no place for more). */
export function mediaRanges(accept: string | undefined): MediaRange[] {
  if (!accept) return [];
  return splitOutsideQuotes(accept, ',').slice(0, 32).flatMap((range) => {
    const [type = '', ...rest] = splitOutsideQuotes(range, ';').map((part) => part.trim());
    if (!/^[\w.+*-]+\/[\w.+*-]+$/.test(type)) return [];
    const params: Record<string, string> = {};
    let q = 1;
    for (const param of rest) {
      const eq = param.indexOf('=');
      if (eq <= 0) continue;
      const name = param.slice(0, eq).trim().toLowerCase();
      const value = unquote(param.slice(eq + 1).trim());
      if (name === 'q') q = Number.isFinite(Number(value)) ? Number(value) : 0;
      else params[name] = value;
    }
    return [{ type: type.toLowerCase(), params, q }];
  });
}

/** Whether Accept names `type` (exactly, not through a wildcard) with `param` equal to `value`, at a weight above 0. */
export const acceptsExactly = (accept: string | undefined, type: string, param: string, value: string) =>
  mediaRanges(accept).some((range) => range.type === type && range.q > 0 && range.params[param.toLowerCase()] === value);
