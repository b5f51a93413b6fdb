import { badInput } from './errors.ts';

/** Caller-chosen identifiers are stored in columns of this many characters. */
export const MAX_ID_LENGTH = 255;

/** Refuses an identifier the database could not store (too long, or with NUL) as bad input naming `field`. */
export function checkIdText(value: string, field: string): string {
  if (value.length > MAX_ID_LENGTH) throw badInput(`${field} must be at most ${MAX_ID_LENGTH} characters`, field);
  if (value.includes('\u0000')) throw badInput(`${field} must not contain NUL characters`, field);
  return value;
}
