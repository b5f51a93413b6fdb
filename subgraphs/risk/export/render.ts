import { cellArea, cellToBoundary, getResolution } from 'h3-js';
import type { RiskExportData, RiskExportFormat } from '../rules.ts';
import { csvText as csv } from './csv.ts';
import { cellFigures, type CellFigureRow, type CellFigures } from '../services/cell-figures.ts';
import { FARS_RECORD_FIELDS, farsRecord, type FarsRow } from '../services/fars-record.ts';
import type { AppliedFilter } from '../filter/crash-filter.ts';

/** One export page to write (in a geometry worker): its rows and what the collection states. */
export interface ExportInput {
  data: RiskExportData;
  format: RiskExportFormat;
  /** cells: the page's H3 cells, each with its crash row when it has one. */
  cells?: { cell: string; row: CellFigureRow | null }[];
  /** crashes: the page's rows as crashPage read them (one JSON array text). */
  rowsJson?: string;
  /** Rows of the whole export (every page). */
  total: number;
  /** The next page's URL; null on the last page. */
  nextUrl: string | null;
  /** The crash filter the rows are of (null: every crash); GeoJSON states it (CSV: the REST path's Crash-Filter header). */
  filter: AppliedFilter | null;
}

const CELL_FIELDS = ['cell', 'resolution', 'riskIndex', 'latitude', 'longitude', 'fatal', 'injury', 'propertyDamageOnly', 'fatalities', 'areaKm2',
  'fatalCrashesPerKm2Year', 'fatalitiesPerKm2Year'] as const satisfies readonly (keyof CellFigures)[];

/** A cell without crashes: zero counts, its exact area. */
const emptyCell = (cell: string): CellFigureRow => ({
  cell, resolution: getResolution(cell), riskIndex: 0, fatal: 0, injury: 0, pdo: 0, fatalities: 0, areaKm2: cellArea(cell, 'km2'), fatalRate: 0, fatalityRate: 0,
});

/** H3 gives closed rings of [longitude, latitude], counter-clockwise: RFC 7946's exterior ring as is. */
const ring = (cell: string) => cellToBoundary(cell, true);
const wktPolygon = (cell: string) => `POLYGON((${ring(cell).map(([lon, lat]) => `${lon} ${lat}`).join(', ')}))`;

/**
 * RFC 7946 FeatureCollection with OGC API Features' foreign members: how many features match over
 * every page, how many this page holds, and the next page's link; and the crash filter applied.
 */
const featureCollection = (features: unknown[], input: ExportInput) => JSON.stringify({
  type: 'FeatureCollection',
  numberMatched: input.total,
  numberReturned: features.length,
  links: input.nextUrl ? [{ rel: 'next', type: 'application/geo+json', href: input.nextUrl }] : [],
  filter: input.filter,
  features,
});

/** The text of one export page: GeoJSON or CSV of cells (polygons and figures) or crashes (points and their FARS record). */
export function renderExport(input: ExportInput): string {
  if (input.data === 'cells') {
    const cells = (input.cells ?? []).map(({ cell, row }) => cellFigures(row ?? emptyCell(cell)));
    if (input.format === 'csv') return csv([...CELL_FIELDS, 'wkt'], cells.map((c) => ({ ...c, wkt: wktPolygon(c.cell) })));
    return featureCollection(cells.map((c) => ({ type: 'Feature', id: c.cell, geometry: { type: 'Polygon', coordinates: [ring(c.cell)] }, properties: c })), input);
  }
  const records = (JSON.parse(input.rowsJson ?? '[]') as FarsRow[]).map(farsRecord);
  if (input.format === 'csv') return csv(FARS_RECORD_FIELDS, records);
  return featureCollection(records.map((r) => ({
    type: 'Feature', id: `${r.YEAR}-${r.ST_CASE}`, geometry: { type: 'Point', coordinates: [r.LONGITUD, r.LATITUDE] }, properties: r,
  })), input);
}
