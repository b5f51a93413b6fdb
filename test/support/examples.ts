/**
 * The document's examples are real answers (test/rest/conformance.test.ts). What the server draws itself
 * (UUIDs, clock readings from Node and from the database, tokens and secrets) is fixed here, so an example
 * only changes when an answer's shape or content does, and no real credential is ever committed.
 */

/** The clock every example reads. */
export const EXAMPLE_NOW = Date.parse('2026-01-15T12:00:00.000Z');
/** A reading within this much of the real clock is the server's own: it becomes EXAMPLE_NOW. */
const NOW_WINDOW_MS = 3 * 86_400_000;
/** UUIDs and 128-bit hex ids (e.g. `client_<32 hex>`). */
const DRAWN_ID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])/gi;
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/** Measurements of this run (a delivery's round trip), fixed like the clock. */
const MEASURED_KEYS: Record<string, number> = { durationMs: 120 };
/** Values that are credentials, whatever they hold. */
const SECRET_KEYS: Record<string, string> = { access_token: 'example-access-token', clientSecret: 'example-client-secret', secret: 'whsec_ZXhhbXBsZS1zZWNyZXQ=' };

const isNow = (ms: number) => Math.abs(ms - Date.now()) < NOW_WINDOW_MS;
const DAY_MS = 86_400_000;
/** Whole days from now, for a reading days ahead (an expiry): it keeps its distance from EXAMPLE_NOW. */
const daysAhead = (ms: number) => {
  const days = Math.round((ms - Date.now()) / DAY_MS);
  return days > 0 && days <= 31 && Math.abs(ms - Date.now() - days * DAY_MS) < DAY_MS / 24 ? days : undefined;
};
/** A cursor that encodes where its page ended (base64url JSON): its readings fixed like the rest. */
function fixCursor(value: string): string {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
    return Buffer.from(JSON.stringify(fixValue(decoded, undefined))).toString('base64url');
  } catch {
    return value;
  }
}
/**
 * Realtime traffic states the current hour of the week in the area's time zone. The walk's areas are in
 * Chicago, where EXAMPLE_NOW (Thursday 12:00 UTC) is Thursday 06:00: hour 78 of the week (0 = Monday 00:00).
 */
const EXAMPLE_HOUR_OF_WEEK = 78;
const isRealtimeTraffic = (value: Record<string, unknown>) => 'freshWithinMinutes' in value && typeof value.hourOfWeek === 'number';

function fixValue(value: unknown, key: string | undefined): unknown {
  if (key !== undefined && key in SECRET_KEYS && typeof value === 'string') return SECRET_KEYS[key];
  if (key !== undefined && key in MEASURED_KEYS && typeof value === 'number') return MEASURED_KEYS[key];
  if (key === 'nextCursor' && typeof value === 'string') return fixCursor(value);
  if (Array.isArray(value)) return value.map((v) => fixValue(v, undefined));
  if (typeof value === 'object' && value !== null) {
    const fixed = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fixValue(v, k)]));
    return isRealtimeTraffic(fixed) ? { ...fixed, hourOfWeek: EXAMPLE_HOUR_OF_WEEK } : fixed;
  }
  if (typeof value === 'string' && ISO_INSTANT.test(value) && isNow(Date.parse(value))) {
    const iso = new Date(EXAMPLE_NOW).toISOString();
    return value.includes('.') ? iso : iso.replace('.000Z', 'Z');
  }
  const ahead = typeof value === 'string' && ISO_INSTANT.test(value) ? daysAhead(Date.parse(value)) : undefined;
  if (ahead !== undefined) {
    const iso = new Date(EXAMPLE_NOW + ahead * DAY_MS).toISOString();
    return (value as string).includes('.') ? iso : iso.replace('.000Z', 'Z');
  }
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) && isNow(Date.parse(value))) return new Date(EXAMPLE_NOW).toISOString().slice(0, 10);
  if (typeof value === 'string' && /^\d{13}$/.test(value) && isNow(Number(value))) return String(EXAMPLE_NOW);
  if (typeof value === 'number' && Number.isInteger(value) && isNow(value)) return EXAMPLE_NOW;
  if (typeof value === 'number' && Number.isInteger(value) && isNow(value * 1000)) return EXAMPLE_NOW / 1000;
  return value;
}

/**
 * Makes `crypto.randomUUID()` count (00000000-0000-4000-8000-000000000001, ...): answers that depend on an
 * id's value (the roadside driver picked from a rescue's id) are then the same on every run.
 */
export function countedUuids(): () => void {
  let n = 0;
  const original = crypto.randomUUID.bind(crypto);
  crypto.randomUUID = () => {
    n += 1;
    return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
  };
  return () => { crypto.randomUUID = original; };
}

/** An example with the server's own ids numbered in order of appearance, its clock readings at EXAMPLE_NOW and fake credentials. */
export function fixedExample<T>(example: T): T {
  const numbers = new Map<string, string>();
  const text = JSON.stringify(fixValue(example, undefined)).replace(DRAWN_ID, (id) => {
    const lower = id.toLowerCase();
    if (!numbers.has(lower)) {
      const n = String(numbers.size + 1).padStart(12, '0');
      numbers.set(lower, lower.includes('-') ? `00000000-0000-4000-8000-${n}` : `00000000000000000000${n}`);
    }
    return numbers.get(lower)!;
  });
  // The walk's webhook receiver listens on a loopback port of its own
  return JSON.parse(text.replace(/http:\/\/127\.0\.0\.1:\d+/g, 'https://receiver.example.com')) as T;
}

/** An example file's text. */
export const exampleFile = (example: unknown) => `${JSON.stringify(example, null, 2)}\n`;
