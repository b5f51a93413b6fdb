import { decodeCursor as decodeKeys, encodeCursor as encodeKeys } from '../platform/cursor.ts';
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

/** A booking's cursor: its start and id. */
export const encodeCursor = (cursor: BookingCursor): string => encodeKeys([cursor.start, cursor.bookingId]);

/** Decodes a cursor made by encodeCursor; anything else is a 400 naming `field`. */
export const decodeCursor = (value: string | null | undefined, field = 'after'): BookingCursor | null => decodeKeys(value, (keys) => (
  // Only a cursor this API made passes: ids it issues fit their column and hold no NUL.
  keys.length === 2 && Number.isSafeInteger(keys[0]) && typeof keys[1] === 'string' && keys[1].length <= ID_MAX && !keys[1].includes('\u0000')
    ? { start: keys[0] as number, bookingId: keys[1] } : null
), field);

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
