/** The query parameters of OGC API - Features items (Part 1), checked before any work. */

/** An OGC API exception (`{ code, description }`, the OGC API's JSON exception) with its HTTP status. */
export class OgcError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, description: string) {
    super(description);
    this.status = status;
    this.code = code;
  }
}

const invalid = (description: string) => new OgcError(400, 'InvalidParameterValue', description);

export const OGC_LIMIT = { default: 100, max: 10_000 } as const;

export type Bbox = [minx: number, miny: number, maxx: number, maxy: number];

/** `bbox=minx,miny,maxx,maxy` in WGS 84 longitude/latitude; one crossing the antimeridian (minx > maxx) is refused. */
export function parseBbox(raw: string | undefined): Bbox | null {
  if (raw === undefined) return null;
  const parts = raw.split(',');
  if (parts.length !== 4 || parts.some((p) => p.trim() === '' || !Number.isFinite(Number(p)))) {
    throw invalid(`bbox must be 4 numbers minx,miny,maxx,maxy (longitude, latitude); got ${JSON.stringify(raw)}`);
  }
  const box = parts.map(Number) as Bbox;
  const [minx, miny, maxx, maxy] = box;
  if ([minx, maxx].some((x) => x < -180 || x > 180) || [miny, maxy].some((y) => y < -90 || y > 90)) {
    throw invalid('bbox longitudes must be within -180..180 and latitudes within -90..90');
  }
  if (minx > maxx) throw invalid('bbox crosses the antimeridian (minx > maxx): not supported, ask for each side separately');
  if (miny > maxy) throw invalid('bbox miny must not exceed maxy');
  return box;
}

export const bboxWkt = ([minx, miny, maxx, maxy]: Bbox) =>
  `POLYGON((${minx} ${miny}, ${maxx} ${miny}, ${maxx} ${maxy}, ${minx} ${maxy}, ${minx} ${miny}))`;

export function parseLimit(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return OGC_LIMIT.default;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < 1 || value > OGC_LIMIT.max) {
    throw invalid(`limit must be a whole number from 1 to ${OGC_LIMIT.max}; got ${JSON.stringify(raw)}`);
  }
  return value;
}

/** An interval of local times, each `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM`; null ends are open. */
export interface Interval { start: string | null; end: string | null }

const DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:\d{2})?)?$/;

/** One instant, as the sortable local text `YYYY-MM-DD[THH:MM]`; `end` makes a date cover its whole day. */
function instant(raw: string, end: boolean): string {
  const m = DATE.exec(raw);
  const date = m ? new Date(Date.UTC(+m[1], +m[2] - 1, +m[3])) : null;
  if (!m || !date || date.getUTCMonth() !== +m[2] - 1 || date.getUTCDate() !== +m[3] || (m[4] !== undefined && (+m[4] > 23 || +m[5] > 59))) {
    throw invalid(`datetime must be an RFC 3339 date or date-time, or an interval a/b with .. for an open end; got ${JSON.stringify(raw)}`);
  }
  const day = `${m[1]}-${m[2]}-${m[3]}`;
  return m[4] === undefined ? (end ? `${day}T99` : day) : `${day}T${m[4]}:${m[5]}`;
}

/**
 * `datetime`: a date, a date-time or an interval `a/b` (`..` or empty for an open end), compared with
 * the crash's local date and time (the time zone of a date-time is not converted: FARS times are local).
 * `../..` (no bound at all) is refused: leave datetime out instead.
 */
export function parseDatetime(raw: string | undefined): Interval | null {
  if (raw === undefined) return null;
  const parts = raw.split('/');
  if (parts.length > 2) throw invalid('datetime holds at most one /');
  if (parts.length === 1) return { start: instant(raw, false), end: instant(raw, true) };
  const [a, b] = parts.map((p) => (p === '..' || p === '' ? null : p));
  if (a === null && b === null) throw invalid('datetime=../.. sets no bound: leave datetime out for every time');
  const interval = { start: a === null ? null : instant(a, false), end: b === null ? null : instant(b, true) };
  if (interval.start && interval.end && interval.start > interval.end) throw invalid('datetime interval ends before it starts');
  return interval;
}

/** Whether a crash's local time (`YYYY-MM-DD[THH:MM]`) falls in the interval. */
export const within = (local: string, { start, end }: Interval) =>
  (start === null || local >= start) && (end === null || local <= end);
