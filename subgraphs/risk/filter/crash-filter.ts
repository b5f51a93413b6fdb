import { badInput } from '../../platform/errors.ts';
import { FUNCTIONAL_SYSTEM, LIGHT_CONDITION, WEATHER } from '../data/codes.ts';

/**
 * Filters on the crash data (docs/risk-index.md "Filters"): one vocabulary for GraphQL's
 * `filter: CrashFilter` and the REST query parameters of the same names (lists comma-separated).
 * Parsing gives a normalised filter (lists sorted and unique, names spelt as the service returns
 * them) or null for no filter; its key is the same for every spelling of one filter.
 */
export interface CrashFilter {
  years?: number[];
  months?: number[];
  /** 1 = Sunday ... 7 = Saturday, as FARS DAY_WEEK. */
  daysOfWeek?: number[];
  /** 0-23; a crash of unknown hour matches no hour. */
  hours?: number[];
  lightConditions?: string[];
  weather?: string[];
  functionClasses?: string[];
  ruralUrban?: RuralUrban;
  /** At least one drinking driver (true), or none (false). */
  drunkDriver?: boolean;
  /** At least one person not in a vehicle (FARS PEDS, cyclists included) (true), or none (false). */
  pedestrians?: boolean;
  minFatalities?: number;
}

export const RURAL_URBAN_VALUES = { RURAL: 1, URBAN: 2 } as const;
export type RuralUrban = keyof typeof RURAL_URBAN_VALUES;

/** A list of whole numbers in a range. */
interface IntList { kind: 'ints'; min: number; max: number }
/** A list of FARS code names (the names the summaries return), matched case-insensitively. */
interface NameList { kind: 'names'; table: Record<number, string> }

/** The list filters, in the order of the key. */
export const LIST_FIELDS = {
  years: { kind: 'ints', min: 1975, max: 2100 },
  months: { kind: 'ints', min: 1, max: 12 },
  daysOfWeek: { kind: 'ints', min: 1, max: 7 },
  hours: { kind: 'ints', min: 0, max: 23 },
  lightConditions: { kind: 'names', table: LIGHT_CONDITION },
  weather: { kind: 'names', table: WEATHER },
  functionClasses: { kind: 'names', table: FUNCTIONAL_SYSTEM },
} as const satisfies Record<string, IntList | NameList>;
export type ListField = keyof typeof LIST_FIELDS;
export const MAX_MIN_FATALITIES = 100;

/** Every filter name, in the order of the key and of the answers. */
export const CRASH_FILTER_FIELDS = [...Object.keys(LIST_FIELDS) as ListField[], 'ruralUrban', 'drunkDriver', 'pedestrians', 'minFatalities'] as const;
export type CrashFilterField = (typeof CRASH_FILTER_FIELDS)[number];

const spelling = (name: string) => name.trim().replace(/\s+/g, ' ').toLowerCase();
/** Each name table by its lower-case spelling: name -> code. */
const codesByName = (table: Record<number, string>) => new Map(Object.entries(table).map(([code, name]) => [spelling(name), Number(code)]));
const NAME_CODES = new Map<Record<number, string>, Map<string, number>>(
  [LIGHT_CONDITION, WEATHER, FUNCTIONAL_SYSTEM].map((t) => [t, codesByName(t)]));

/** The codes of a name list (every name is one of its table's). */
export const codesOf = (field: ListField, names: string[]) => {
  const spec = LIST_FIELDS[field] as NameList;
  return names.map((n) => NAME_CODES.get(spec.table)!.get(spelling(n))!);
};

/** What a list accepts, for messages and the API documentation. */
export function accepted(field: ListField): string {
  const spec: IntList | NameList = LIST_FIELDS[field];
  return spec.kind === 'ints' ? `whole numbers from ${spec.min} to ${spec.max}`
    : `names among ${Object.values(spec.table).map((n) => JSON.stringify(n)).join(', ')}`;
}

function listValue(field: ListField, values: unknown[], prefix: string): number[] | string[] {
  const spec: IntList | NameList = LIST_FIELDS[field];
  const details = { accepted: spec.kind === 'ints' ? { min: spec.min, max: spec.max } : Object.values(spec.table) };
  const fail = (value: unknown) => badInput(`${prefix}${field} takes ${accepted(field)}; got ${JSON.stringify(value)}`, `${prefix}${field}`, details);
  if (!values.length) throw badInput(`${prefix}${field} lists no value: give at least one of ${accepted(field)}, or leave it out`, `${prefix}${field}`, details);
  if (spec.kind === 'ints') {
    const ints = values.map((v) => {
      const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < spec.min || n > spec.max) throw fail(v);
      return n;
    });
    return [...new Set(ints)].sort((a, b) => a - b);
  }
  const codes = NAME_CODES.get(spec.table)!;
  const found = values.map((v) => {
    const code = typeof v === 'string' ? codes.get(spelling(v)) : undefined;
    if (code === undefined) throw fail(v);
    return code;
  });
  return [...new Set(found)].sort((a, b) => a - b).map((code) => spec.table[code]);
}

function booleanValue(field: 'drunkDriver' | 'pedestrians', value: unknown, prefix: string): boolean {
  if (typeof value === 'boolean') return value;
  const text = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (text === 'true' || text === 'false') return text === 'true';
  throw badInput(`${prefix}${field} takes true or false; got ${JSON.stringify(value)}`, `${prefix}${field}`, { accepted: [true, false] });
}

/** The filter as given (GraphQL input, or REST parameters already split), validated and normalised; null when nothing is filtered. */
export function parseCrashFilter(input: Record<string, unknown> | null | undefined, prefix = 'filter.'): CrashFilter | null {
  if (input == null) return null;
  const filter: CrashFilter = {};
  for (const field of Object.keys(LIST_FIELDS) as ListField[]) {
    const value = input[field];
    if (value == null) continue;
    (filter as Record<string, unknown>)[field] = listValue(field, Array.isArray(value) ? value : [value], prefix);
  }
  const rural = input.ruralUrban;
  if (rural != null) {
    const upper = typeof rural === 'string' ? rural.trim().toUpperCase() : '';
    if (!(upper in RURAL_URBAN_VALUES)) {
      throw badInput(`${prefix}ruralUrban takes RURAL or URBAN; got ${JSON.stringify(rural)}`, `${prefix}ruralUrban`, { accepted: Object.keys(RURAL_URBAN_VALUES) });
    }
    filter.ruralUrban = upper as RuralUrban;
  }
  for (const field of ['drunkDriver', 'pedestrians'] as const) if (input[field] != null) filter[field] = booleanValue(field, input[field], prefix);
  const min = input.minFatalities;
  if (min != null) {
    const n = typeof min === 'string' && min.trim() !== '' ? Number(min) : min;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_MIN_FATALITIES) {
      throw badInput(`${prefix}minFatalities takes a whole number from 1 to ${MAX_MIN_FATALITIES}; got ${JSON.stringify(min)}`, `${prefix}minFatalities`,
        { accepted: { min: 1, max: MAX_MIN_FATALITIES } });
    }
    filter.minFatalities = n;
  }
  return Object.keys(filter).length ? filter : null;
}

/**
 * A comma-separated list of a query parameter. Names may hold commas ("Fog, Smog, Smoke"): pieces are
 * joined back, the longest run that spells a name first.
 */
export function splitList(field: ListField, raw: string): string[] {
  const pieces = raw.split(',');
  const spec: IntList | NameList = LIST_FIELDS[field];
  if (spec.kind === 'ints') return pieces.map((p) => p.trim());
  const names = NAME_CODES.get(spec.table)!;
  const out: string[] = [];
  for (let i = 0; i < pieces.length;) {
    let end = pieces.length;
    while (end > i + 1 && !names.has(spelling(pieces.slice(i, end).join(',')))) end -= 1;
    out.push(pieces.slice(i, end).join(',').trim());
    i = end;
  }
  return out;
}

/** The filter from REST query parameters of the same names (`read` gives a parameter's text); null when none is given. */
export function crashFilterFromQuery(read: (name: string) => string | undefined): CrashFilter | null {
  const input: Record<string, unknown> = {};
  for (const field of CRASH_FILTER_FIELDS) {
    const raw = read(field);
    if (raw === undefined || raw.trim() === '') continue;
    input[field] = field in LIST_FIELDS ? splitList(field as ListField, raw) : raw;
  }
  return parseCrashFilter(input, '');
}

/** The filter as query parameters (a next-page link carries it on), in the key's order. */
export function crashFilterParams(filter: CrashFilter | null): [name: CrashFilterField, value: string][] {
  if (!filter) return [];
  return CRASH_FILTER_FIELDS.flatMap((field) => {
    const value = filter[field];
    if (value === undefined) return [];
    return [[field, Array.isArray(value) ? value.join(',') : String(value)] as [CrashFilterField, string]];
  });
}

/**
 * The same text for every spelling of one filter ('' for none): the caches' key and the answers' `key`,
 * a query string that gives the filter (commas, which a query may hold as they are, left readable).
 */
export const crashFilterKey = (filter: CrashFilter | null) => new URLSearchParams(crashFilterParams(filter)).toString().replace(/%2C/g, ',');

/** Which filter an answer applied: every name (null when not filtered on) and the key; null for no filter. */
export function appliedFilter(filter: CrashFilter | null) {
  if (!filter) return null;
  return { key: crashFilterKey(filter), ...Object.fromEntries(CRASH_FILTER_FIELDS.map((f) => [f, filter[f] ?? null])) } as AppliedFilter;
}
export type AppliedFilter = { key: string } & { [F in CrashFilterField]: CrashFilter[F] | null };

/** The filter in words for a picture or a log line, e.g. `years 2015; pedestrians true`. */
export const crashFilterText = (filter: CrashFilter) => crashFilterParams(filter).map(([name, value]) => `${name} ${value}`).join('; ');
