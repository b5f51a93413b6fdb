/**
 * Rules an area enforces that the gateway's REST contract (OpenAPI, multipart limits) must state too:
 * kept here so that the gateway describes them without importing an area.
 */

/** Longest accepted device id (an IMEI has 15 digits; other identifiers are allowed). */
export const DEVICE_ID_MAX = 64;

/** Largest provider file accepted, in bytes (decoded). */
export const MAX_FILE_BYTES = 512 * 1024;
/** Content types a provider file may have: the upload refuses others, and retrieval answers with one of them. */
export const ALLOWED_CONTENT_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'image/heic', 'application/pdf', 'text/plain'] as const;

/** Where the Risk Index's REST paths live: the report links its exports there. */
export const RISK_REST_PREFIX = '/riskIndex/v1';
/** What the Risk Index exports: the H3 cells of an area, or its fatal crashes. */
export const RISK_EXPORT_DATA = ['cells', 'crashes'] as const;
export type RiskExportData = (typeof RISK_EXPORT_DATA)[number];
export const RISK_EXPORT_FORMATS = ['geojson', 'csv'] as const;
export type RiskExportFormat = (typeof RISK_EXPORT_FORMATS)[number];
/** Rows per export page: the default (every cell of any area fits one page; crashes in pages of 1,000) and the most asked. */
export const RISK_EXPORT_PAGE = { cells: { default: 5000, max: 5000 }, crashes: { default: 1000, max: 5000 } } as const;

