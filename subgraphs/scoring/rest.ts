import { AppError } from '../platform/errors.ts';
import { readFileSync } from 'node:fs';
import { typedRoute } from '../platform/rest/operation.ts';
import type { JsonSchema, RestRoute } from '../platform/rest/types.ts';
import { answer, arrayOf, bool, component, date, nullable, str } from '../platform/rest/components.ts';
import { restMvr, restScore } from './representation.ts';
import { CreateMvr, GetPrequalCoverageScore, type GetPrequalCoverageScoreQuery } from './rest.generated.ts';
import { SMI_PREFIX } from './rest-users.ts';

/** A score, or a 422 MISSING_DATA problem that lists `missingFields`. */
function restScoreResult({ prequalCoverageScore: result }: GetPrequalCoverageScoreQuery) {
  if (result.__typename === 'MissingUserData') {
    throw new AppError('MISSING_DATA', `${result.message}; then request the score again`, { missingFields: result.missingFields });
  }
  return restScore(result);
}

const nullableDate = nullable(date);
const summarySchema = component('MvrSummary', answer({
  providerReportId: nullable({ type: 'string', description: 'The provider\'s own id of the report, when it sent one' }),
  license: answer({
    status: { type: 'string', enum: ['VALID', 'LIMITED', 'INCOMPLETE', 'EXPIRED', 'NOT_VALID', 'SUSPENDED', 'REVOKED', 'CANCELLED', 'DENIED', 'UNKNOWN'], description: 'One scale for both providers' },
    reportedStatus: { type: 'string', description: 'As the provider spelled it' }, number: nullable(str), state: nullable(str), licenseClass: nullable(str),
    issueDate: nullableDate, firstIssueDate: { ...nullableDate, description: 'Years licensed are counted from it' }, expirationDate: nullableDate,
    restrictions: arrayOf(str), endorsements: arrayOf(str),
  }),
  violations: arrayOf(answer({
    acdCode: nullable(str), category: { type: 'string', enum: ['ALCOHOL_DRUGS', 'DUTIES_FAILED', 'EQUIPMENT', 'MANEUVERS', 'SPEEDING', 'UNCLASSIFIED', 'WITHDRAWAL'] },
    severity: { type: 'string', enum: ['MINOR', 'SERIOUS', 'MAJOR'] }, severityBasis: { type: 'string', enum: ['REPORTED', 'ACD'] }, moving: bool,
    date: { ...date, description: 'The offence date (the conviction date when it is unknown)' }, violationDate: nullableDate, convictionDate: nullableDate, description: nullable(str),
  })),
  accidents: arrayOf(answer({ date, atFault: nullable({ type: 'boolean', description: 'Null when the state does not record fault' }), injuries: bool, fatalities: bool, description: nullable(str) })),
  withdrawals: arrayOf(answer({ acdCode: nullable(str), startDate: date, endDate: nullableDate, description: nullable(str) })),
}, { description: 'The report normalised into the summary both formats share' }));

const mvrResponseSchema: JsonSchema = {
  type: 'object',
  properties: {
    mvrId: { type: 'string', description: 'The MVR record id (scores name the record they used)' },
    userId: { type: 'string' }, source: { type: 'string', enum: ['sourcea', 'sourceb'] },
    createdAt: { type: 'string', format: 'date-time' }, summary: summarySchema,
  },
  required: ['mvrId', 'userId', 'source', 'createdAt', 'summary'],
};

const SOURCE_A_EXAMPLE = {
  id: 'mvr_7f3a9c', object: 'motor_vehicle_report', report_type: 'full', full_name: 'Dana Reyes', license_number: 'D1234567',
  license_state: 'CA', license_status: 'VALID', license_class: 'C', issued_date: '2021-04-02', first_issued_date: '2009-07-15',
  expiration_date: '2026-04-02', restrictions: ['corrective lenses'], endorsements: [],
  violations: [{ type: 'Speeding', description: 'Speeding 11-15 over', acd_code: 'S93', violation_date: '2024-05-01', conviction_date: '2024-06-10', state: 'CA', points: 1 }],
  accidents: [{ accident_date: '2023-11-20', description: 'Rear-end collision', at_fault: true, injuries: false, fatalities: false, state: 'CA' }],
  suspensions: [{ acd_code: 'D35', description: 'Failure to pay child support', start_date: '2019-01-05', end_date: '2019-03-01' }],
  created_at: '2026-10-02T17:04:11Z',
};

const SOURCE_B_EXAMPLE = {
  reportId: 'SB-2026-000481', reportKind: 'FULL', orderedAt: '2026-10-02T17:04:11Z',
  driver: { firstName: 'Dana', lastName: 'Reyes', dateOfBirth: '1988-02-11' },
  license: { number: 'R200-4417-9921', jurisdiction: 'IL', status: 'VALID', class: 'D', issueDate: '2022-02-11', originalIssueDate: '2006-03-01', expirationDate: '2026-02-11', restrictions: [], endorsements: [] },
  events: [
    { eventType: 'CONVICTION', acdCode: 'A21', description: 'DUI - BAC .08 or more', eventDate: '2025-07-04', convictionDate: '2025-09-12', severity: 'MAJOR' },
    { eventType: 'ACCIDENT', eventDate: '2024-01-09', description: 'Intersection collision', atFault: false, injury: true },
    { eventType: 'WITHDRAWAL', acdCode: 'A21', eventDate: '2025-09-12', endDate: '2026-03-12', description: 'Suspension - DUI' },
  ],
};

/**
 * A provider's report JSON Schema (schema/mvr/<file>) as an OpenAPI component: open, as reports are stored as sent. Its
 * `$defs` that the schema uses become components of their own (`<name><Def>`): an OpenAPI document has no base URI per
 * schema, generated clients (openapi-typescript) would read a nested `$defs` as a required property, and a definition
 * nothing uses would be an unused component.
 */
function mvrReportComponent(name: string, schemaFile: string): JsonSchema {
  const text = readFileSync(new URL(`../../schema/mvr/${schemaFile}`, import.meta.url), 'utf8');
  const defName = (def: string) => `${name}${def[0].toUpperCase()}${def.slice(1)}`;
  const { $schema: _dialect, $id: _id, $defs, ...schema } = JSON.parse(text.replace(/"#\/\$defs\/([A-Za-z0-9_]+)"/g, (_, def: string) => `"#/components/schemas/${defName(def)}"`)) as JsonSchema;
  const used = JSON.stringify(schema);
  for (const [def, definition] of Object.entries($defs ?? {})) {
    if (used.includes(`"#/components/schemas/${defName(def)}"`)) component(defName(def), definition as JsonSchema);
  }
  return component(name, schema);
}

function mvrRoute(segment: 'sourcea-mvr' | 'sourceb-mvr', source: 'SOURCE_A' | 'SOURCE_B', operationId: string, label: string, schemaFile: string, example: unknown): RestRoute {
  return typedRoute(CreateMvr, {
    method: 'POST', path: `${SMI_PREFIX}/users/:userId/${segment}`, operationId, summary: `Add a full MVR from provider ${label}`,
    tag: 'Pre-qualification scoring', scope: 'b2b', status: 201, rawBody: true,
    variables: (req) => ({ userId: req.params.userId, source, reportJson: req.rawBody ?? '' }),
    result: (d) => restMvr(d.createMvr),
    docs: {
      description: `The body is the provider ${label} report itself (its JSON Schema is the MvrSource${label}Report component). It is stored exactly as sent, `
        + 'encrypted at rest, and never updated; the latest one created is the one scores use. Unknown extra fields are kept. '
        + 'A light (pass/fail) report is refused with 400 saying a full MVR is required; a body that is not JSON, or whose sections have '
        + 'the wrong types, is 400 naming the offending path (`field`, e.g. `report.violations[0].violation_date`). Unknown user: 404.',
      requestBody: mvrReportComponent(`MvrSource${label}Report`, schemaFile),
      requestExample: example,
      response: mvrResponseSchema,
    },
  });
}

export const scoringRoutes: readonly RestRoute[] = [
  mvrRoute('sourcea-mvr', 'SOURCE_A', 'createSourceAMVR', 'A', 'source-a.schema.json', SOURCE_A_EXAMPLE),
  mvrRoute('sourceb-mvr', 'SOURCE_B', 'createSourceBMVR', 'B', 'source-b.schema.json', SOURCE_B_EXAMPLE),
  typedRoute(GetPrequalCoverageScore, {
    method: 'GET', path: `${SMI_PREFIX}/users/:userId/prequal-coverage-score`, operationId: 'getPrequalCoverageScore',
    summary: 'Pre-qualification coverage score (0-900, higher is safer) from the latest MVR',
    tag: 'Pre-qualification scoring', scope: 'b2b',
    variables: (req) => ({ userId: req.params.userId }),
    result: restScoreResult,
    docs: {
      description: 'Scores the user from dateOfBirth, homeZip and the most recently created MVR (model documented in docs/score-model.md). '
        + 'When dateOfBirth, homeZip or an MVR is missing the answer is 422 application/problem+json with code MISSING_DATA and '
        + '`missingFields` (e.g. ["dateOfBirth","homeZip"], or "mvr"); add them with updateUser / an MVR and call again. '
        + 'The enrollment status never affects the score.',
      problems: { 422: 'dateOfBirth, homeZip or an MVR is missing: code MISSING_DATA with missingFields' },
      response: {
        type: 'object',
        properties: {
          userId: { type: 'string' }, score: { type: 'integer', minimum: 0, maximum: 900 }, modelVersion: { type: 'string' },
          mvrId: { type: 'string', description: 'The MVR record the score used' }, mvrSource: { type: 'string', enum: ['sourcea', 'sourceb'] },
          asOf: { type: 'string', format: 'date' }, reasonCodes: { type: 'array', maxItems: 4, items: { type: 'string' } },
          reasons: { type: 'array', maxItems: 4, items: { type: 'object', properties: { code: { type: 'string' }, description: { type: 'string' } } } },
        },
        required: ['userId', 'score', 'modelVersion', 'mvrId', 'reasonCodes'],
      },
    },
  }),
];
