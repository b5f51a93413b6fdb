/**
 * What orients a reader on the Risk Index maps (issue 24 item 4): county boundaries and the names of
 * places of 100,000 people or more, from packages shipped in node_modules, on the SVG and in the
 * interactive map's GeoJSON layers. Drawn here without a database or workers.
 */
import { geojsonToWKT } from '@terraformer/wkt';
import { booleanClockwise } from '@turf/turf';
import type { FeatureCollection, Polygon } from 'geojson';
import { describe, expect, it } from 'vitest';
import { COVERED_STATES } from '../../subgraphs/risk/geometry/coverage.ts';
import { placeLabels } from '../../subgraphs/risk/map/labels.ts';
import { mapLayers } from '../../subgraphs/risk/map/layers.ts';
import { renderMapSvg, type MapInput } from '../../subgraphs/risk/map/render.ts';
import { coveredCounties, majorPlaces, MIN_PLACE_POPULATION } from '../../subgraphs/risk/map/reference.ts';

const [CA, IL] = COVERED_STATES;
const LA_COUNTY_WKT = geojsonToWKT(coveredCounties().find((c) => c.fips === '06037')!.feature.geometry);
const LOOP: Pick<MapInput, 'wkt' | 'radius' | 'states'> = { wkt: 'POINT(-87.6298 41.8781)', radius: 0.02, states: [IL] };

const input = (area: Pick<MapInput, 'wkt' | 'radius' | 'states'>, cells: string[] = []): MapInput => ({
  ...area, coverageMessage: '', resolution: cells.length ? 9 : null, cells, figures: {},
  index: null, fatalCrashes: 0, fatalities: 0, fatalCrashesPerKm2Year: null, points: [], filter: null,
});
const placeNames = (svg: string) => [...svg.matchAll(/<g class="place"[^>]*><circle [^>]*\/><text [^>]*>([^<]*)<\/text><\/g>/g)].map((m) => m[1]);
const countyTitles = (svg: string) => [...svg.matchAll(/<path class="county"[^>]*><title>([^<]*)<\/title>/g)].map((m) => m[1]);

describe('reference layers', () => {
  it('holds every county of California (58) and Illinois (102) from us-atlas, and their places of 100,000 or more from GeoNames', () => {
    const counties = coveredCounties();
    expect(counties.filter((c) => c.state === 'CA')).toHaveLength(58);
    expect(counties.filter((c) => c.state === 'IL')).toHaveLength(102);
    const places = majorPlaces();
    expect(places.every((p) => p.population >= MIN_PLACE_POPULATION && (p.state === 'CA' || p.state === 'IL'))).toBe(true);
    expect(places[0]).toMatchObject({ name: 'Los Angeles', state: 'CA' });
    expect(places.map((p) => p.name)).toEqual(expect.arrayContaining(['Chicago', 'Long Beach', 'Aurora', 'Sacramento', 'San Francisco']));
    // Neighbourhoods GeoNames files as sections of a city are not places.
    expect(places.map((p) => p.name)).not.toContain('Hollywood');
  });
});

describe('the SVG map', () => {
  it('draws the counties of Los Angeles County\'s extent under the cells and names its major places', () => {
    const svg = renderMapSvg(input({ wkt: LA_COUNTY_WKT, radius: null, states: [CA] }));
    expect(svg.indexOf('<g id="counties"')).toBeGreaterThan(svg.indexOf('<g id="states"'));
    expect(svg.indexOf('<g id="counties"')).toBeLessThan(svg.indexOf('<g id="cells"'));
    expect(countyTitles(svg)).toEqual(expect.arrayContaining(['Los Angeles County, CA', 'Orange County, CA', 'Ventura County, CA', 'Kern County, CA']));
    // Only counties reaching into the map's extent: none of northern California.
    expect(countyTitles(svg)).not.toContain('Sacramento County, CA');
    const names = placeNames(svg);
    expect(names).toEqual(expect.arrayContaining(['Los Angeles', 'Long Beach', 'Pasadena', 'Glendale', 'Lancaster']));
    expect(names).not.toContain('San Francisco');
    expect(svg).toContain('place of 100,000 people or more (GeoNames, CC BY 4.0)');
  });

  it('names Chicago on a map of the city, with Cook County\'s boundary and its neighbours', () => {
    const svg = renderMapSvg(input({ wkt: 'POINT(-87.68 41.84)', radius: 0.2, states: [IL] }));
    expect(placeNames(svg)).toEqual(['Chicago']);
    expect(countyTitles(svg)).toEqual(expect.arrayContaining(['Cook County, IL', 'DuPage County, IL']));
    expect(svg).not.toContain('id="locator"');
  });

  it('names the nearest major place, with its distance and direction, on a map smaller than a city (the Loop)', () => {
    const svg = renderMapSvg(input(LOOP));
    expect(countyTitles(svg)).toEqual(['Cook County, IL']);
    // GeoNames puts Chicago's point 3 km south-west of the Loop, outside this map's extent.
    expect(placeNames(svg)).toEqual([]);
    expect(svg).toMatch(/<g id="locator">.*Nearest place of 100,000\+ people: Chicago, IL \(its centre 3\.\d km SW\)<\/text>/);
  });

  it('keeps place labels apart and inside the map', () => {
    const places = majorPlaces().filter((p) => p.state === 'CA').map((p, i) => ({ ...p, x: 100 + (i % 10) * 30, y: 100 + Math.floor(i / 10) * 8 }));
    const extent = { x0: 10, y0: 54, x1: 790, y1: 548 };
    const labels = placeLabels(places, extent);
    expect(labels.length).toBeGreaterThan(5);
    expect(labels.length).toBeLessThan(places.length);
    expect(labels[0].place.name).toBe('Los Angeles');
    const boxes = labels.map((l) => {
      const w = l.place.name.length * l.fontSize * 0.58;
      const x0 = l.anchor === 'start' ? l.x : l.anchor === 'end' ? l.x - w : l.x - w / 2;
      return [x0, l.y - l.fontSize, x0 + w, l.y];
    });
    for (const [i, a] of boxes.entries()) {
      expect(a[0]).toBeGreaterThanOrEqual(extent.x0);
      expect(a[2]).toBeLessThanOrEqual(extent.x1);
      for (const b of boxes.slice(i + 1)) expect(a[0] < b[2] - 1 && a[2] > b[0] + 1 && a[1] < b[3] - 1 && a[3] > b[1] + 1).toBe(false);
    }
  });
});

describe('the interactive map\'s GeoJSON layers', () => {
  it('gives the area, the counties around it, its places and its cells with their figures, as RFC 7946 wants', () => {
    const cells = ['892664c1a2fffff', '892664c1a37ffff'];
    const m = { ...input(LOOP, cells), figures: { [cells[0]]: { index: 64.5, fatalCrashes: 3, fatalities: 4, fatalCrashesPerKm2Year: 1.2, fatalitiesPerKm2Year: 1.6 } } };
    const layers = JSON.parse(mapLayers(m)) as FeatureCollection & { legend: { bands: unknown[] } };
    const of = (layer: string) => layers.features.filter((f) => f.properties!.layer === layer);
    expect(of('area')).toHaveLength(1);
    expect(of('county').map((f) => f.properties!.name)).toContain('Cook');
    expect(of('place').map((f) => f.properties!.name)).toEqual(['Chicago']);
    expect(of('cell').map((f) => f.properties)).toEqual([
      expect.objectContaining({ h3: cells[0], index: 64.5, fatalCrashes: 3, fatalities: 4, fatalCrashesPerKm2Year: 1.2, color: '#f03b20' }),
      expect.objectContaining({ h3: cells[1], index: 0, fatalCrashes: 0, color: '#eeeeee' }),
    ]);
    for (const f of of('cell')) {
      const ring = (f.geometry as Polygon).coordinates[0];
      expect(ring[0]).toEqual(ring.at(-1));
      expect(booleanClockwise(ring)).toBe(false);
      expect(ring[0][0]).toBeLessThan(-87); // longitude first
    }
    expect(layers.legend.bands).toHaveLength(5);
  });
});
