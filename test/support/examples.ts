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

/** realtimeTraffic's `hourOfWeek` is the clock's hour of the week in the area's time zone: fixed like the clock (Thursday 06:00, Monday 0). */
const EXAMPLE_HOUR_OF_WEEK = 3 * 24 + 6;

const isNow = (ms: number) => Math.abs(ms - Date.now()) < NOW_WINDOW_MS;

function fixValue(value: unknown, key: string | undefined): unknown {
  if (key !== undefined && key in SECRET_KEYS && typeof value === 'string') return SECRET_KEYS[key];
  if (key !== undefined && key in MEASURED_KEYS && typeof value === 'number') return MEASURED_KEYS[key];
  if (Array.isArray(value)) return value.map((v) => fixValue(v, undefined));
  if (typeof value === 'object' && value !== null) {
    const fixed = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fixValue(v, k)]));
    return key === 'realtimeTraffic' && typeof fixed.hourOfWeek === 'number' ? { ...fixed, hourOfWeek: EXAMPLE_HOUR_OF_WEEK } : fixed;
  }
  if (typeof value === 'string' && ISO_INSTANT.test(value) && isNow(Date.parse(value))) {
    const iso = new Date(EXAMPLE_NOW).toISOString();
    return value.includes('.') ? iso : iso.replace('.000Z', 'Z');
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
