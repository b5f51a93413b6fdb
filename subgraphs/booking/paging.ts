import { badInput } from '../platform/errors.ts';
import { ID_MAX } from './entities.ts';

/** Page sizes: `first` defaults to this and may not exceed MAX_PAGE_SIZE. */
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** Position of a booking in the listing order (start descending, then bookingId descending). */
export interface BookingCursor {
  start: number;
  bookingId: string;
}

/** A page of rows, fetched as `first + 1` rows so that `hasNextPage` costs no extra statement. */
export interface Page<T> {
  rows: T[];
  hasNextPage: boolean;
}

/** `first` must be a whole number from 1 to MAX_PAGE_SIZE. */
export function checkPageSize(first: number | null | undefined, field = 'first'): number {
  const size = first ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
    throw badInput(`${field} must be a whole number from 1 to ${MAX_PAGE_SIZE}`, field);
  }
  return size;
}

/** An opaque cursor: base64url of a small JSON array. */
export const encodeCursor = (cursor: BookingCursor): string =>
  Buffer.from(JSON.stringify([cursor.start, cursor.bookingId])).toString('base64url');

/** Decodes a cursor made by encodeCursor; anything else is a 400 naming `field`. */
export function decodeCursor(value: string | null | undefined, field = 'after'): BookingCursor | null {
  if (value == null) return null;
  const invalid = () => badInput(`${field} is not a cursor returned by this API`, field);
  if (!/^[A-Za-z0-9_-]{1,1400}$/.test(value)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || !Number.isSafeInteger(parsed[0]) || typeof parsed[1] !== 'string') throw invalid();
  // Only a cursor this API made gets here: ids it issues fit their column and hold no NUL.
  if (parsed[1].length > ID_MAX || parsed[1].includes('\u0000')) throw invalid();
  return { start: parsed[0] as number, bookingId: parsed[1] as string };
}

/** The condition "comes after `cursor`" in the listing order. */
export const afterCursor = (cursor: BookingCursor | null) => (cursor ? {
  $or: [
    { startTimestamp: { $lt: cursor.start } },
    { startTimestamp: cursor.start, bookingId: { $lt: cursor.bookingId } },
  ],
} : {});

/** The listing order: most recent start first; bookingId breaks ties so the order is total. */
export const BOOKING_ORDER = [{ startTimestamp: 'desc' }, { bookingId: 'desc' }] as const;

/** Splits `first + 1` fetched rows into a page. */
export const toPage = <T>(rows: T[], first: number): Page<T> => ({ rows: rows.slice(0, first), hasNextPage: rows.length > first });
