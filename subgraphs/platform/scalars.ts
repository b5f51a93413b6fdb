import { GraphQLScalarType, Kind, type ValueNode } from 'graphql';
import { badInput } from './errors.ts';

export const VIN_PATTERN = /^[A-Za-z0-9]{17}$/;
export const ZIP_PATTERN = /^\d{5}(-\d{4})?$/;
const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True when `value` is YYYY-MM-DD and names a day that exists in the calendar. */
export function isCalendarDate(value: string): boolean {
  const m = DATE_PATTERN.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** Builds a string scalar whose values must pass `check`; the error names the scalar and the rule. */
function stringScalar(name: string, description: string, check: (v: string) => boolean, rule: string, normalise = (v: string) => v) {
  const parse = (value: unknown) => {
    if (typeof value !== 'string' || !check(value)) {
      throw badInput(`${name} must be ${rule}; got ${JSON.stringify(value)}`);
    }
    return normalise(value);
  };
  return new GraphQLScalarType<string, string>({
    name,
    description,
    serialize: (v) => String(v),
    parseValue: parse,
    parseLiteral: (ast: ValueNode) => parse(ast.kind === Kind.STRING ? ast.value : undefined),
  });
}

export const VINScalar = stringScalar('VIN', 'Vehicle identification number: exactly 17 letters or digits, returned upper-case.',
  (v) => VIN_PATTERN.test(v), 'exactly 17 letters or digits', (v) => v.toUpperCase());

export const DateScalar = stringScalar('Date', 'A calendar day, YYYY-MM-DD.', isCalendarDate, 'a real calendar day as YYYY-MM-DD');

export const ZipCodeScalar = stringScalar('ZipCode', 'US ZIP code: ##### or #####-####.', (v) => ZIP_PATTERN.test(v), '##### or #####-####');

export const WKTScalar = stringScalar('WKT', 'A geometry in Well-Known Text, longitude first (e.g. `POINT(-87.63 41.88)`).',
  (v) => v.trim().length > 0 && v.length <= 1_000_000, 'a non-empty WKT string');

function parseEpoch(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw badInput(`EpochSeconds must be a non-negative whole number of seconds; got ${JSON.stringify(value)}`);
  }
  return value;
}

export const EpochSecondsScalar = new GraphQLScalarType<number, number>({
  name: 'EpochSeconds',
  description: 'Seconds since 1970-01-01T00:00:00Z, as a whole number (not limited to 32 bits).',
  serialize: (v) => Number(v),
  parseValue: parseEpoch,
  parseLiteral: (ast) => parseEpoch(ast.kind === Kind.INT ? Number(ast.value) : undefined),
});

// Recursion here is bounded: every document reaching a GraphQL route has had its bracket nesting checked (JSON_MAX_DEPTH) before parsing.
function literalToJson(ast: ValueNode, variables?: Record<string, unknown> | null): unknown {
  switch (ast.kind) {
    case Kind.STRING: case Kind.BOOLEAN: return ast.value;
    case Kind.INT: case Kind.FLOAT: return Number(ast.value);
    case Kind.NULL: return null;
    case Kind.LIST: return ast.values.map((v) => literalToJson(v, variables));
    case Kind.OBJECT: return Object.fromEntries(ast.fields.map((f) => [f.name.value, literalToJson(f.value, variables)]));
    case Kind.VARIABLE: return variables?.[ast.name.value];
    default: return undefined;
  }
}

export const JSONScalar = new GraphQLScalarType<unknown, unknown>({
  name: 'JSON',
  description: 'Any JSON value.',
  serialize: (v) => v,
  parseValue: (v) => v,
  parseLiteral: literalToJson,
});

export const DateTimeScalar = new GraphQLScalarType<Date | string, string>({
  name: 'DateTime',
  description: 'An instant, ISO 8601 in UTC (e.g. `2026-11-22T10:15:00.000Z`).',
  serialize: (v) => (v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString()),
  parseValue: (v) => parseInstant(v),
  parseLiteral: (ast) => parseInstant(ast.kind === Kind.STRING ? ast.value : undefined),
});

function parseInstant(value: unknown): string {
  if (typeof value !== 'string' || Number.isNaN(Date.parse(value)) || !/^\d{4}-\d{2}-\d{2}T/.test(value)) {
    throw badInput(`DateTime must be an ISO 8601 instant; got ${JSON.stringify(value)}`);
  }
  return new Date(value).toISOString();
}

export const scalarResolvers = {
  DateTime: DateTimeScalar,
  VIN: VINScalar,
  Date: DateScalar,
  ZipCode: ZipCodeScalar,
  WKT: WKTScalar,
  EpochSeconds: EpochSecondsScalar,
  JSON: JSONScalar,
};
