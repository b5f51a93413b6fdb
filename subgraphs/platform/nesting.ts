import { badInput } from './errors.ts';

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * True when JSON text nests objects and arrays deeper than `max`, found by one pass over the text
 * (brackets outside strings) before anything parses it: parsers and the code that walks their result
 * recurse, and a few thousand levels exhaust the stack. Malformed text is left to the parser.
 */
export function jsonTextTooDeep(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i += 1;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth += 1;
      if (depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
  return false;
}

const OPEN_PAREN = 0x28;
const CLOSE_PAREN = 0x29;
const HASH = 0x23;
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * True when a GraphQL document nests selection sets, arguments, lists and input objects deeper than
 * `max` (brackets outside strings, block strings and comments), checked before graphql-js parses it:
 * its parser, and the JSON scalar's reading of a literal, recurse once per level.
 */
export function documentTooDeep(source: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < source.length; i += 1) {
    const c = source.charCodeAt(i);
    if (c === HASH) {
      while (i + 1 < source.length && source.charCodeAt(i + 1) !== NEWLINE && source.charCodeAt(i + 1) !== CARRIAGE_RETURN) i += 1;
    } else if (c === QUOTE) {
      if (source.startsWith('"""', i)) {
        const end = blockStringEnd(source, i + 3);
        if (end < 0) return false;
        i = end + 2;
      } else {
        for (i += 1; i < source.length && source.charCodeAt(i) !== QUOTE && source.charCodeAt(i) !== NEWLINE; i += 1) if (source.charCodeAt(i) === BACKSLASH) i += 1;
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET || c === OPEN_PAREN) {
      depth += 1;
      if (depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET || c === CLOSE_PAREN) {
      depth -= 1;
    }
  }
  return false;
}

/** Index of the `"""` closing a block string whose content starts at `from` (`\"""` is escaped), or -1. */
function blockStringEnd(source: string, from: number): number {
  for (let i = source.indexOf('"""', from); i >= 0; i = source.indexOf('"""', i + 1)) {
    if (source.charCodeAt(i - 1) !== BACKSLASH) return i;
  }
  return -1;
}

/** True when a parsed value nests objects and arrays deeper than `max`; walks without recursion. */
export function jsonValueTooDeep(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const child of Object.values(current)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

/** The error for input nested deeper than JSON_MAX_DEPTH (BAD_USER_INPUT, HTTP 400). */
export const tooDeep = (what: string, max: number, field?: string) =>
  badInput(`${what} nests deeper than ${max} levels (JSON_MAX_DEPTH)`, field, { reason: 'TOO_DEEP' });
