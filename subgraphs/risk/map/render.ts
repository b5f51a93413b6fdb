import { rewind } from '@turf/turf';
import { geoDistance, geoMercator, geoPath } from 'd3-geo';
import type { Feature, MultiPolygon, Polygon } from 'geojson';
import { cellToBoundary } from 'h3-js';
import type { GeometryBudget } from '../geometry/budget.ts';
import { COVERED_STATES, stateBoundaries, type CoveredState } from '../geometry/coverage.ts';
import { searchArea } from '../geometry/wkt.ts';
import { placeLabels } from './labels.ts';
import { coveredCounties, majorPlaces, MIN_PLACE_POPULATION } from './reference.ts';

/** Crash points are drawn when the covered area is at most this large (a city) ... */
export const MAX_POINTS_KM2 = 1000;
/** ... and holds at most this many fatal crashes; above, the cells alone stay readable. */
export const MAX_MAP_POINTS = 2000;

const WIDTH = 800;
const HEIGHT = 640;
const MAP = { x0: 10, y0: 54, x1: WIDTH - 10, y1: 548 };
const EARTH_KM = 6371.0088;
/** Index bands of riskInfo.distribution and their colours (ColorBrewer YlOrRd). */
export const BANDS = [
  { from: 0, to: 20, color: '#ffffb2' }, { from: 20, to: 40, color: '#fecc5c' }, { from: 40, to: 60, color: '#fd8d3c' },
  { from: 60, to: 80, color: '#f03b20' }, { from: 80, to: 100, color: '#bd0026' },
];
export const NO_CRASH = '#eeeeee';
const STATE_FIPS: Record<string, number> = Object.fromEntries(COVERED_STATES.map((s) => [s.code, s.fips]));
const MAP_POINTS_TEXT = `drawn for areas up to ${MAX_POINTS_KM2.toLocaleString('en-US')} km² with at most ${MAX_MAP_POINTS.toLocaleString('en-US')}`;
const SOURCE_LINE = 'Crashes: NHTSA Fatality Analysis Reporting System (FARS), 2013-2015 (fatal crashes only, no traffic exposure). Boundaries: U.S. Census Bureau (us-atlas). Cells: H3.';

const escapeXml = (text: string) => text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
/** The colour of a cell's index: its band's, or grey without a fatal crash. */
export const cellColor = (index: number | undefined) => (index === undefined || index === 0 ? NO_CRASH : bandOf(index).color);
const bandOf = (index: number) => BANDS.find((b) => index >= b.from && (index < b.to || b.to === 100)) ?? BANDS[BANDS.length - 1];
const POINTS_OF_COMPASS = ['N', 'NE', 'E', 'SE', 'S', 'SW', 'W', 'NW'];

/** Where `to` lies seen from `from`, as one of eight points of the compass (local, flat: enough for a note). */
function compass(from: [number, number], to: [number, number]): string {
  const east = (to[0] - from[0]) * Math.cos((from[1] * Math.PI) / 180), north = to[1] - from[1];
  const degrees = (Math.atan2(east, north) * 180) / Math.PI;
  return POINTS_OF_COMPASS[Math.round(((degrees + 360) % 360) / 45) % 8];
}
const NICE_KM = [0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];

/** A cell as a GeoJSON polygon wound clockwise, as d3-geo's spherical polygons want. */
function cellFeature(cell: string): Feature<Polygon> {
  const ring = cellToBoundary(cell, true);
  return { type: 'Feature', properties: {}, geometry: { type: 'Polygon', coordinates: [ring.reverse()] } };
}

/** The SVG picture, or the GeoJSON layers of the interactive page (layers.ts). */
export type MapFormat = 'svg' | 'geojson';

export interface CellFigures {
  index: number;
  fatalCrashes: number;
  fatalities: number;
  fatalCrashesPerKm2Year: number;
  fatalitiesPerKm2Year: number;
}

/** What a map shows, gathered on the event loop (map.ts) and drawn in a worker: plain data that crosses threads. */
export interface MapInput {
  /** The search area as requested: the worker derives its outline again (no geometry crosses threads). */
  wkt: string;
  radius: number | null | undefined;
  states: CoveredState[];
  coverageMessage: string;
  resolution: number | null;
  cells: string[];
  /** Figures of the cells with a fatal crash. */
  figures: Record<string, CellFigures>;
  index: number | null;
  fatalCrashes: number;
  fatalities: number;
  fatalCrashesPerKm2Year: number | null;
  /** Crash points: longitude, latitude, fatalities. */
  points: [number, number, number][];
  /** The crash filter applied (crashFilterText), or null: the counts, cells and points are of the crashes it matches. */
  filter: string | null;
}

/**
 * The map of a Risk Index report as an SVG document: the search area, the outline of the covered
 * states it touches, its H3 cells coloured by index, crash points when few enough, a legend, a scale
 * bar and the source line. CPU-bound (d3-geo): runs in the Risk Index workers.
 */
export function renderMapSvg(m: MapInput, budget?: GeometryBudget): string {
  const area = rewind(searchArea(m.wkt, m.radius, budget).area, { reverse: true }) as Feature<Polygon | MultiPolygon>;
  const projection = geoMercator().fitExtent([[MAP.x0 + 10, MAP.y0 + 10], [MAP.x1 - 10, MAP.y1 - 10]], area)
    .clipExtent([[MAP.x0, MAP.y0], [MAP.x1, MAP.y1]]);
  const path = geoPath(projection).digits(1);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="Helvetica, Arial, sans-serif">`);
  out.push(`<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`);
  out.push(`<rect x="${MAP.x0}" y="${MAP.y0}" width="${MAP.x1 - MAP.x0}" height="${MAP.y1 - MAP.y0}" fill="#dfeaf2"/>`);

  const touched = new Set<number>(m.states.map((state) => state.fips));
  const states = stateBoundaries().filter((b) => touched.has(b.state.fips));
  out.push('<g id="states" fill="#fbfaf6" stroke="#6b6b6b" stroke-width="1.2">');
  for (const s of states) out.push(`<path data-state="${s.state.code}" d="${path(s.feature) ?? ''}"/>`);
  out.push('</g>');

  // Counties under the cells: only those reaching into the map's extent are drawn (and clipped to it).
  const [west, north] = projection.invert!([MAP.x0, MAP.y0])!, [east, south] = projection.invert!([MAP.x1, MAP.y1])!;
  out.push('<g id="counties" fill="none" stroke="#8a8a8a" stroke-width="0.7" stroke-dasharray="3 2">');
  for (const c of coveredCounties()) {
    if (!touched.has(STATE_FIPS[c.state]) || c.bbox[0] > east || c.bbox[2] < west || c.bbox[1] > north || c.bbox[3] < south) continue;
    const d = path(c.feature);
    if (d) out.push(`<path class="county" data-county="${c.fips}" d="${d}"><title>${escapeXml(`${c.name} County, ${c.state}`)}</title></path>`);
  }
  out.push('</g>');

  out.push('<g id="cells" stroke="#ffffff" stroke-width="0.4">');
  for (const cell of m.cells) {
    const index = m.figures[cell]?.index;
    const fill = cellColor(index);
    out.push(`<path class="cell" data-cell="${cell}" data-index="${index ?? 0}" fill="${fill}" fill-opacity="${index ? 0.9 : 0.55}" d="${path(cellFeature(cell)) ?? ''}"/>`);
  }
  out.push('</g>');

  out.push(`<path id="search-area" d="${path(area) ?? ''}" fill="none" stroke="#1f4e9c" stroke-width="2" stroke-dasharray="6 4"/>`);

  const points = m.points;
  out.push(`<g id="crashes" fill="#1b1b1b" fill-opacity="0.75" stroke="#ffffff" stroke-width="0.6">`);
  for (const [longitude, latitude, fatalities] of points) {
    const xy = projection([longitude, latitude]);
    if (xy) out.push(`<circle cx="${xy[0].toFixed(1)}" cy="${xy[1].toFixed(1)}" r="${(1.5 + Math.sqrt(fatalities)).toFixed(1)}"/>`);
  }
  out.push('</g>');

  // Place names above the cells (a label under them would be hidden), on a white halo.
  const places = majorPlaces().filter((p) => touched.has(STATE_FIPS[p.state]));
  const inside = places.flatMap((p) => {
    const xy = projection([p.longitude, p.latitude]);
    return xy && xy[0] >= MAP.x0 && xy[0] <= MAP.x1 && xy[1] >= MAP.y0 && xy[1] <= MAP.y1 ? [{ ...p, x: xy[0], y: xy[1] }] : [];
  });
  const labels = placeLabels(inside, MAP);
  out.push('<g id="places" fill="#222" stroke="#ffffff" stroke-width="3" paint-order="stroke" stroke-linejoin="round">');
  for (const l of labels) {
    out.push(`<g class="place" data-population="${l.place.population}"><circle cx="${l.place.x.toFixed(1)}" cy="${l.place.y.toFixed(1)}" r="2.5" stroke-width="1"/>`
      + `<text x="${l.x.toFixed(1)}" y="${l.y.toFixed(1)}" text-anchor="${l.anchor}" font-size="${l.fontSize}"${l.fontSize > 11 ? ' font-weight="bold"' : ''}>${escapeXml(l.place.name)}</text></g>`);
  }
  out.push('</g>');
  // A map smaller than a city (the Loop) may hold no place's point: say which one is nearest, and where.
  const centre = projection.invert!([(MAP.x0 + MAP.x1) / 2, (MAP.y0 + MAP.y1) / 2])!;
  const nearest = labels.length ? null : places.map((p) => ({ p, km: geoDistance(centre, [p.longitude, p.latitude]) * EARTH_KM })).sort((a, b) => a.km - b.km)[0];
  if (nearest) {
    const note = `Nearest place of ${MIN_PLACE_POPULATION.toLocaleString('en-US')}+ people: ${nearest.p.name}, ${nearest.p.state} (its centre ${nearest.km < 10 ? nearest.km.toFixed(1) : Math.round(nearest.km)} km ${compass(centre, [nearest.p.longitude, nearest.p.latitude])})`;
    out.push(`<g id="locator"><rect x="${MAP.x1 - 8 - note.length * 6.2}" y="${MAP.y0 + 8}" width="${note.length * 6.2}" height="20" fill="#ffffff" fill-opacity="0.85"/>`
      + `<text x="${MAP.x1 - 14}" y="${MAP.y0 + 22}" text-anchor="end" font-size="11" fill="#222">${escapeXml(note)}</text></g>`);
  }

  const title = m.cells.length
    ? `Road risk index ${m.index ?? 0} (0-100) · ${m.states.map((state) => state.name).join(' and ')} · ${m.cells.length} H3 cells at resolution ${m.resolution}`
    : 'Outside coverage (California and Illinois): no data';
  const subtitle = m.cells.length
    ? `${m.fatalCrashes} fatal crashes${m.filter ? ` matching ${m.filter}` : ''}, ${m.fatalities} killed${points.length ? ` (${points.length} shown as dots)` : ''}`
      + ` · ${m.fatalCrashesPerKm2Year ?? 0} fatal crashes per km² per year`
    : m.coverageMessage;
  out.push(`<text x="${MAP.x0}" y="22" font-size="16" font-weight="bold" fill="#222">${escapeXml(title)}</text>`);
  out.push(`<text x="${MAP.x0}" y="42" font-size="12" fill="#444">${escapeXml(subtitle)}</text>`);

  // Scale bar: ground length of 120 px at the map's centre, rounded down to a round number.
  const cx = (MAP.x0 + MAP.x1) / 2, cy = (MAP.y0 + MAP.y1) / 2;
  const a = projection.invert?.([cx, cy]), b = projection.invert?.([cx + 120, cy]);
  if (a && b) {
    const km = geoDistance(a, b) * EARTH_KM;
    const nice = [...NICE_KM].reverse().find((n) => n <= km) ?? NICE_KM[0];
    const px = (120 * nice) / km;
    const y = MAP.y1 - 14;
    out.push(`<g id="scale"><rect x="${MAP.x0 + 8}" y="${y - 16}" width="${px + 16}" height="26" fill="#ffffff" fill-opacity="0.8"/>`
      + `<path d="M${MAP.x0 + 16} ${y - 4}v6h${px.toFixed(1)}v-6" fill="none" stroke="#222" stroke-width="1.5"/>`
      + `<text x="${MAP.x0 + 16}" y="${y - 6}" font-size="11" fill="#222">${nice >= 1 ? nice : nice * 1000} ${nice >= 1 ? 'km' : 'm'}</text></g>`);
  }

  out.push(`<g id="legend" font-size="11" fill="#222"><text x="${MAP.x0}" y="${MAP.y1 + 20}" font-weight="bold">Cell index</text>`);
  const swatches = [{ color: NO_CRASH, label: 'no fatal crash' }, ...BANDS.map((band) => ({ color: band.color, label: `${band.from}-${band.to}` }))];
  swatches.forEach((s, i) => {
    const x = MAP.x0 + 70 + i * 100;
    out.push(`<rect class="legend-swatch" x="${x}" y="${MAP.y1 + 9}" width="16" height="14" fill="${s.color}" stroke="#999" stroke-width="0.5"/><text x="${x + 21}" y="${MAP.y1 + 20}">${s.label}</text>`);
  });
  out.push(`<circle class="legend-dot" cx="${MAP.x0 + 78}" cy="${MAP.y1 + 40}" r="3" fill="#1b1b1b"/><text x="${MAP.x0 + 91}" y="${MAP.y1 + 44}">fatal crash (${MAP_POINTS_TEXT})</text>`);
  out.push(`<path d="M${MAP.x0 + 470} ${MAP.y1 + 40}h18" stroke="#1f4e9c" stroke-width="2" stroke-dasharray="6 4"/><text x="${MAP.x0 + 494}" y="${MAP.y1 + 44}">search area</text>`);
  out.push(`<path d="M${MAP.x0 + 590} ${MAP.y1 + 40}h18" stroke="#6b6b6b" stroke-width="1.2"/><text x="${MAP.x0 + 614}" y="${MAP.y1 + 44}">state boundary</text>`);
  out.push(`<path d="M${MAP.x0 + 70} ${MAP.y1 + 62}h18" stroke="#8a8a8a" stroke-width="0.7" stroke-dasharray="3 2"/><text x="${MAP.x0 + 94}" y="${MAP.y1 + 66}">county boundary</text>`
    + `<circle cx="${MAP.x0 + 208}" cy="${MAP.y1 + 62}" r="2.5" fill="#222"/><text x="${MAP.x0 + 216}" y="${MAP.y1 + 66}">place of ${MIN_PLACE_POPULATION.toLocaleString('en-US')} people or more (GeoNames, CC BY 4.0)</text></g>`);
  out.push(`<text id="source" x="${MAP.x0}" y="${HEIGHT - 12}" font-size="9.5" fill="#555">${escapeXml(SOURCE_LINE)}</text>`);
  out.push('</svg>');
  return out.join('\n');
}
