import { decodeCursor, encodeCursor } from '../../platform/cursor.ts';
import { RISK_EXPORT_PAGE, type RiskExportData, type RiskExportFormat } from '../rules.ts';
import { riskExportUrl } from '../export/url.ts';
import { badInput } from '../../platform/errors.ts';
import type { AreaQuery } from './area.ts';
import { crashPage, decodeCrashCursor } from './crash-page.ts';
import { appliedFilter } from '../filter/crash-filter.ts';

const MEDIA_TYPES: Record<RiskExportFormat, string> = { geojson: 'application/geo+json', csv: 'text/csv; charset=utf-8; header=present' };
const H3_INDEX = /^[0-9a-f]{15}$/;

const areaOf = (q: AreaQuery) => ({ wkt: q.request.wkt, radius: q.request.radius, queryMethod: q.queryMethod, resolution: q.request.resolution });

/** The REST URLs of the area's exports (relative to the gateway), each its first page. */
export const exportLinks = (q: AreaQuery) => ({
  cellsGeoJson: riskExportUrl('cells', 'geojson', areaOf(q), q.filter),
  cellsCsv: riskExportUrl('cells', 'csv', areaOf(q), q.filter),
  crashesGeoJson: riskExportUrl('crashes', 'geojson', areaOf(q), q.filter),
  crashesCsv: riskExportUrl('crashes', 'csv', areaOf(q), q.filter),
});

export interface ExportArgs {
  data: RiskExportData;
  format: RiskExportFormat;
  first?: number | null;
  after?: string | null;
}

/** A cell cursor: the H3 index of the page's last cell (the cells go in index order). */
const decodeCellCursor = (value: string | null | undefined) =>
  decodeCursor(value, (keys) => (keys.length === 1 && typeof keys[0] === 'string' && H3_INDEX.test(keys[0]) ? keys[0] : null));

/**
 * The cells of one page: every cell of the area in H3 index order behind `after`, with its crash row when
 * it has one (a crash the filter matches: a cell without one is written as a cell without crashes).
 */
async function cellsPage(q: AreaQuery, first: number, after: string | null) {
  const sorted = [...q.cells].sort();
  const start = after === null ? 0 : sorted.findIndex((c) => c > after);
  const cells = start < 0 ? [] : sorted.slice(start, start + first);
  const rows = new Map((await q.filteredFigureCells()).map((r) => [r.cell, r]));
  const hasNextPage = start >= 0 && start + first < sorted.length;
  return {
    input: { cells: cells.map((cell) => ({ cell, row: rows.get(cell) ?? null })) },
    total: sorted.length, hasNextPage,
    endCursor: cells.length ? encodeCursor([cells[cells.length - 1]]) : null,
  };
}

async function crashesPage(q: AreaQuery, first: number, after: string | null | undefined) {
  const page = await crashPage(q, first, decodeCrashCursor(after));
  const total = (await q.filteredFigureCells()).reduce((s, c) => s + c.fatal, 0);
  return { input: { rowsJson: page.rowsJson }, total, hasNextPage: page.hasNextPage, endCursor: page.endCursor };
}

/**
 * One page of an export of the area: the rows are read here (bounded by the page size), the text is
 * written in the geometry workers. Outside coverage: an empty collection (a CSV with its header only).
 */
export async function exportPage(q: AreaQuery, { data, format, first, after }: ExportArgs) {
  const sizes = RISK_EXPORT_PAGE[data];
  const size = first ?? sizes.default;
  if (!Number.isInteger(size) || size < 1 || size > sizes.max) throw badInput(`first must be a whole number from 1 to ${sizes.max}`, 'first');
  const page = data === 'cells' ? await cellsPage(q, size, decodeCellCursor(after)) : await crashesPage(q, size, after);
  const nextUrl = page.hasNextPage && page.endCursor
    ? riskExportUrl(data, format, areaOf(q), q.filter, { after: page.endCursor, limit: size === sizes.default ? null : size }) : null;
  const content = await q.pool.renderExport({ data, format, ...page.input, total: page.total, nextUrl, filter: appliedFilter(q.filter) });
  return {
    mediaType: MEDIA_TYPES[format],
    filename: `risk-index-${data}.${format}`,
    content,
    total: page.total,
    pageInfo: { hasNextPage: page.hasNextPage, endCursor: page.endCursor },
    nextUrl,
  };
}
