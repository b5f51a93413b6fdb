/** Rules the Risk Index enforces that its REST contract (OpenAPI) states too. */

/** Where the Risk Index's REST paths live: the report links its exports there. */
export const RISK_REST_PREFIX = '/riskIndex/v1';
/** What the Risk Index exports: the H3 cells of an area, or its fatal crashes. */
export const RISK_EXPORT_DATA = ['cells', 'crashes'] as const;
export type RiskExportData = (typeof RISK_EXPORT_DATA)[number];
export const RISK_EXPORT_FORMATS = ['geojson', 'csv'] as const;
export type RiskExportFormat = (typeof RISK_EXPORT_FORMATS)[number];
/** Rows per export page: the default (every cell of any area fits one page; crashes in pages of 1,000) and the most asked. */
export const RISK_EXPORT_PAGE = { cells: { default: 5000, max: 5000 }, crashes: { default: 1000, max: 5000 } } as const;
/** A batch scoring job (batch/): at most this many rows and bytes of input. */
export const RISK_BATCH_MAX_ROWS = 10_000;
export const RISK_BATCH_MAX_BYTES = 5 * 1024 * 1024;
/** Jobs per client: queued (a submission past it is 429), and running at once (the others wait their turn). */
export const RISK_BATCH_MAX_QUEUED = 5;
export const RISK_BATCH_MAX_RUNNING = 2;
/** Days a job and its result are kept. */
export const RISK_BATCH_RETENTION_DAYS = 7;
/** The columns of a CSV input, in order (radius may be left out). */
export const RISK_BATCH_CSV_COLUMNS = ['id', 'wkt', 'radius'] as const;
