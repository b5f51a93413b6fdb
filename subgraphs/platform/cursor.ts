import { badInput } from './errors.ts';

/** An opaque keyset cursor: base64url of a small JSON array of the last row's sort keys. */
export const encodeCursor = (keys: readonly (string | number)[]): string => Buffer.from(JSON.stringify(keys)).toString('base64url');

/**
 * Decodes a cursor made by encodeCursor and checks its keys with `read` (null: not ours); anything
 * else is a 400 naming `field`.
 */
export function decodeCursor<T>(value: string | null | undefined, read: (keys: unknown[]) => T | null, field = 'after'): T | null {
  if (value == null) return null;
  const invalid = () => badInput(`${field} is not a cursor returned by this API`, field);
  if (!/^[A-Za-z0-9_-]{1,1400}$/.test(value)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const keys = Array.isArray(parsed) ? read(parsed) : null;
  if (keys === null) throw invalid();
  return keys;
}
