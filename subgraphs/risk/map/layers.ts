import { bboxClip, bbox as turfBbox } from '@turf/turf';
import type { Feature, FeatureCollection, Geometry, MultiPolygon, Polygon } from 'geojson';
import { cellToBoundary } from 'h3-js';
import type { GeometryBudget } from '../geometry/budget.ts';
import { searchArea } from '../geometry/wkt.ts';
import { coveredCounties, majorPlaces } from './reference.ts';
import { BANDS, cellColor, NO_CRASH, type MapInput } from './render.ts';

/** Counties and places are given for the area's bounding box grown by this share on each side (the page's first view and some panning). */
const MARGIN = 0.5;
const round = (v: number) => Math.round(v * 1e6) / 1e6;

/**
 * The layers of the interactive map (GET /riskIndex/v1/map/view) as one GeoJSON FeatureCollection
 * (RFC 7946: longitude first, outer rings counter-clockwise), each feature tagged with its `layer`:
 * `area` (the search area), `county` (clipped to the box around the area), `place` (100,000 people or
 * more) and `cell` (H3 cells with their figures and colour), and a `legend` member. CPU-bound like the SVG: runs in the workers.
 */
export function mapLayers(m: MapInput, budget?: GeometryBudget): string {
  const area = searchArea(m.wkt, m.radius, budget).area as Feature<Polygon | MultiPolygon>;
  const [w, s, e, n] = turfBbox(area);
  const dx = (e - w) * MARGIN, dy = (n - s) * MARGIN;
  const box: [number, number, number, number] = [w - dx, s - dy, e + dx, n + dy];
  const states = new Set(m.states.map((state) => state.code));
  const features: Feature<Geometry, Record<string, unknown>>[] = [{ type: 'Feature', properties: { layer: 'area' }, geometry: area.geometry }];
  for (const c of coveredCounties()) {
    if (!states.has(c.state as never) || c.bbox[0] > box[2] || c.bbox[2] < box[0] || c.bbox[1] > box[3] || c.bbox[3] < box[1]) continue;
    const clipped = bboxClip(c.feature, box);
    features.push({ type: 'Feature', properties: { layer: 'county', fips: c.fips, name: c.name, state: c.state }, geometry: clipped.geometry });
  }
  for (const p of majorPlaces()) {
    if (!states.has(p.state as never) || p.longitude < box[0] || p.longitude > box[2] || p.latitude < box[1] || p.latitude > box[3]) continue;
    features.push({ type: 'Feature', properties: { layer: 'place', name: p.name, state: p.state, population: p.population }, geometry: { type: 'Point', coordinates: [p.longitude, p.latitude] } });
  }
  for (const cell of m.cells) {
    const f = m.figures[cell];
    // h3-js gives the boundary closed and counter-clockwise, as RFC 7946 wants.
    const ring = cellToBoundary(cell, true).map(([lon, lat]) => [round(lon), round(lat)]);
    features.push({
      type: 'Feature',
      properties: { layer: 'cell', h3: cell, resolution: m.resolution, color: cellColor(f?.index), index: f?.index ?? 0, fatalCrashes: f?.fatalCrashes ?? 0, fatalities: f?.fatalities ?? 0,
        fatalCrashesPerKm2Year: f?.fatalCrashesPerKm2Year ?? 0, fatalitiesPerKm2Year: f?.fatalitiesPerKm2Year ?? 0 },
      geometry: { type: 'Polygon', coordinates: [ring] },
    });
  }
  // `legend` is a foreign member (RFC 7946 section 6.1): GIS tools ignore it, the page draws it.
  // `filter` too: the crash filter the cells' figures are of (null: every crash).
  const collection: FeatureCollection & { legend: unknown; filter: string | null } = { type: 'FeatureCollection', filter: m.filter, features,
    legend: { title: m.cells.length ? `Road risk index ${m.index ?? 0} (0-100) · ${m.cells.length} H3 cells at resolution ${m.resolution}` : 'Outside coverage (California and Illinois): no data',
      noCrash: NO_CRASH, bands: BANDS } };
  return JSON.stringify(collection);
}
