import { z } from 'zod';
import { badInput } from './errors.ts';

/**
 * An organisation name (the tenant every client, token and row carries): a letter or digit, then
 * up to 63 letters, digits, `.`, `_` or `-`. No spaces, slashes, control or NUL characters: it
 * appears in logs, keys and tokens, and PostgreSQL text cannot hold NUL.
 */
export const ORGANISATION_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const organisationName = z.string().regex(ORGANISATION_PATTERN,
  'must be 1 to 64 characters: a letter or digit, then letters, digits, ".", "_" or "-"');

/** The name, or BAD_USER_INPUT naming the `organisation` field. */
export function parseOrganisation(value: unknown): string {
  const parsed = organisationName.safeParse(value);
  if (!parsed.success) throw badInput(`organisation ${parsed.error.issues[0]!.message}`, 'organisation');
  return parsed.data;
}
