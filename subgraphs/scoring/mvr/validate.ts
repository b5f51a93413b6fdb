import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { badInput } from '../../platform/errors.ts';
import type { Json } from './common.ts';
import { normaliseSourceA } from './source-a.ts';
import { normaliseSourceB } from './source-b.ts';
import type { MvrSource, MvrSummary } from './summary.ts';

const schemaUrl = (file: string) => new URL(`../../../schema/mvr/${file}`, import.meta.url);

interface SourceFormat {
  label: string;
  schemaFile: string;
  /** Why this object is a light (pass/fail) report, or null when it claims to be full. */
  lightReason: (report: Json) => string | null;
  normalise: (report: Json) => MvrSummary;
}

const lower = (v: unknown) => (typeof v === 'string' ? v.trim().toLowerCase() : undefined);
const missing = (report: Json, keys: string[]) => keys.filter((k) => report[k] === undefined);

const FORMATS: Record<MvrSource, SourceFormat> = {
  SOURCE_A: {
    label: 'Source A',
    schemaFile: 'source-a.schema.json',
    lightReason: (r) => {
      if (lower(r.report_type) === 'light') return 'report_type is "light"';
      const absent = missing(r, ['license_status', 'violations', 'accidents']);
      return absent.length ? `it has no ${absent.join(', ')}` : null;
    },
    normalise: normaliseSourceA,
  },
  SOURCE_B: {
    label: 'Source B',
    schemaFile: 'source-b.schema.json',
    lightReason: (r) => {
      if (lower(r.reportKind) === 'pass_fail') return 'reportKind is "PASS_FAIL"';
      const absent = missing(r, ['license', 'events']);
      return absent.length ? `it has no ${absent.join(', ')}` : null;
    },
    normalise: normaliseSourceB,
  },
};

let validators: Record<MvrSource, ValidateFunction> | null = null;

/** The Ajv validators of the two formats, compiled once from schema/mvr/*.json. Extra fields pass. */
function validatorFor(source: MvrSource): ValidateFunction {
  if (!validators) {
    const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
    addFormats.default(ajv, ['date']);
    const compile = (file: string) => ajv.compile(JSON.parse(readFileSync(schemaUrl(file), 'utf8')));
    validators = { SOURCE_A: compile(FORMATS.SOURCE_A.schemaFile), SOURCE_B: compile(FORMATS.SOURCE_B.schemaFile) };
  }
  return validators[source];
}

/** `/violations/0/acd_code` → `report.violations[0].acd_code` */
export function reportPath(pointer: string, extra?: string): string {
  const parts = pointer.split('/').slice(1).map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (extra) parts.push(extra);
  return parts.reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : `${path}.${part}`), 'report');
}

/** The most telling Ajv error as (path, message), without echoing any value from the report. */
function describe(errors: ErrorObject[]): { field: string; message: string } {
  // A plain error (wrong type, bad date, missing field) names the path best; anyOf only when alone.
  const error = errors.find((e) => e.keyword !== 'anyOf' && !e.schemaPath.includes('/anyOf/')) ?? errors.find((e) => e.keyword === 'anyOf') ?? errors[0];
  if (error.keyword === 'required') {
    const prop = (error.params as { missingProperty: string }).missingProperty;
    return { field: reportPath(error.instancePath, prop), message: 'is required' };
  }
  if (error.keyword === 'anyOf') return { field: reportPath(error.instancePath), message: 'needs violation_date or conviction_date' };
  return { field: reportPath(error.instancePath), message: error.message ?? 'is invalid' };
}

/** Parses report text; the error says where it broke, never what it contained. */
export function parseReportText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const position = /position (\d+)/.exec((error as Error).message)?.[1];
    throw badInput(`The report is not valid JSON${position ? ` (syntax error at character ${position})` : ''}`, 'report', { reason: 'INVALID_JSON' });
  }
}

export interface ValidReport {
  report: Json;
  summary: MvrSummary;
}

/**
 * Accepts a full report of the given source: not an object, or wrong types, is invalid input naming
 * the path; a light (pass/fail) report is refused saying a full MVR is required.
 */
export function validateReport(source: MvrSource, value: unknown): ValidReport {
  const format = FORMATS[source];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw badInput(`The ${format.label} report must be a JSON object`, 'report', { reason: 'INVALID_REPORT' });
  }
  const report = value as Json;
  const light = format.lightReason(report);
  if (light) {
    throw badInput(`A full MVR is required: this ${format.label} report is a light (pass/fail) report: ${light}; send the full report with the license, violations and accidents`,
      'report', { reason: 'LIGHT_MVR' });
  }
  const validate = validatorFor(source);
  if (!validate(report)) {
    const { field, message } = describe(validate.errors ?? []);
    throw badInput(`The ${format.label} report is invalid: ${field} ${message}`, field, { reason: 'INVALID_REPORT' });
  }
  return { report, summary: format.normalise(report) };
}

/** The summary of a stored (already validated) report. */
export const summarise = (source: MvrSource, report: Json): MvrSummary => FORMATS[source].normalise(report);
