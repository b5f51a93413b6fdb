import { createHash } from 'node:crypto';

/**
 * One key for every spelling of a Risk Index search area: WKT keywords are case-insensitive and
 * spacing is free. The geometry workers' area cache, the answer cache and the REST ETag use it.
 */
export const riskAreaKey = (wkt: string, radius: number | null | undefined) =>
  createHash('sha256').update(`${radius ?? ''}|${wkt.trim().replace(/\s+/g, ' ').toUpperCase()}`).digest('base64');
