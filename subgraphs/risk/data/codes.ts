/** FARS code tables (NHTSA FARS Analytical User's Manual) used when a file has no *NAME columns. */
export const WEATHER: Record<number, string> = {
  0: 'No Additional Atmospheric Conditions', 1: 'Clear', 2: 'Rain', 3: 'Sleet or Hail', 4: 'Snow', 5: 'Fog, Smog, Smoke',
  6: 'Severe Crosswinds', 7: 'Blowing Sand, Soil, Dirt', 8: 'Other', 10: 'Cloudy', 11: 'Blowing Snow',
  12: 'Freezing Rain or Drizzle', 98: 'Not Reported', 99: 'Reported as Unknown',
};
export const LIGHT_CONDITION: Record<number, string> = {
  1: 'Daylight', 2: 'Dark - Not Lighted', 3: 'Dark - Lighted', 4: 'Dawn', 5: 'Dusk', 6: 'Dark - Unknown Lighting',
  7: 'Other', 8: 'Not Reported', 9: 'Reported as Unknown',
};
export const FUNCTIONAL_SYSTEM: Record<number, string> = {
  1: 'Interstate', 2: 'Principal Arterial - Other Freeways and Expressways', 3: 'Principal Arterial - Other',
  4: 'Minor Arterial', 5: 'Major Collector', 6: 'Minor Collector', 7: 'Local', 96: 'Trafficway Not in State Inventory',
  98: 'Not Reported', 99: 'Unknown',
};

export const RURAL_URBAN: Record<number, string> = { 1: 'Rural', 2: 'Urban', 6: 'Trafficway Not in State Inventory', 8: 'Not Reported', 9: 'Unknown' };

/**
 * FARS before 2015 coded the road as ROAD_FNC (rural 1-9, urban 11-19); from 2015 as FUNC_SYS and
 * RUR_URB. The older code as the newer pair (urban collectors 15 become major collectors).
 */
export const ROAD_FNC_TO_FUNC_SYS: Record<number, [funcSys: number, ruralUrban: number]> = {
  1: [1, 1], 2: [3, 1], 3: [4, 1], 4: [5, 1], 5: [6, 1], 6: [7, 1], 9: [99, 1],
  11: [1, 2], 12: [2, 2], 13: [3, 2], 14: [4, 2], 15: [5, 2], 16: [7, 2], 19: [99, 2], 99: [99, 9],
};

/** Hour of week in local time: 0 = Monday 00:00 ... 167 = Sunday 23:00; null when the hour is unknown. */
export function hourOfWeek(year: number, month: number, day: number, hour: number | null): number | null {
  if (hour === null || hour < 0 || hour > 23) return null;
  const weekday = new Date(Date.UTC(year, month - 1, day)).getUTCDay(); // 0 = Sunday
  return ((weekday + 6) % 7) * 24 + hour;
}

/** The current hour of week in a time zone. */
export function currentHourOfWeek(timeZone: string, now = new Date()): number {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: 'numeric', hourCycle: 'h23' }).formatToParts(now);
  const weekday = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(parts.find((p) => p.type === 'weekday')?.value ?? 'Mon');
  const hour = Number(parts.find((p) => p.type === 'hour')?.value ?? 0);
  return weekday * 24 + (hour % 24);
}
