import { area as turfArea, booleanPointInPolygon, featureCollection, intersect } from '@turf/turf';
import type { Feature, MultiPolygon, Polygon } from 'geojson';
import { geojsonToWKT } from '@terraformer/wkt';
import { cellToLatLng, getResolution, latLngToCell } from 'h3-js';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../subgraphs/platform/errors.ts';
import { MAX_CELLS, selectCells } from '../../subgraphs/risk/geometry/cells.ts';
import { clipToCoverage, stateAt, stateBoundaries } from '../../subgraphs/risk/geometry/coverage.ts';
import { checkRadius, DEFAULT_LINEAR_RADIUS, parseWkt, searchArea } from '../../subgraphs/risk/geometry/wkt.ts';

function badInputMessage(fn: () => unknown): string {
  try { fn(); } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('BAD_USER_INPUT');
    return (error as AppError).message;
  }
  throw new Error('expected a BAD_USER_INPUT error');
}

const covered = (wkt: string, radius?: number) => {
  const s = searchArea(wkt, radius);
  const c = clipToCoverage(s.area);
  return { s, c, sel: c.parts.length ? selectCells(c.parts.map((p) => p.area), c.coveredKm2) : null };
};

describe('WKT parsing', () => {
  it('parses every supported form, longitude first, keywords in any case', () => {
    expect(parseWkt('POINT(-87.63 41.88)')).toEqual({ type: 'Point', coordinates: [-87.63, 41.88] });
    expect(parseWkt('point (-87.63 41.88)')).toEqual({ type: 'Point', coordinates: [-87.63, 41.88] });
    expect(parseWkt('LINESTRING(-87.6766 41.8813, -87.6718 41.8814)').type).toBe('LineString');
    expect(parseWkt('POLYGON((-87.7 41.8, -87.6 41.8, -87.6 41.9, -87.7 41.9, -87.7 41.8))').type).toBe('Polygon');
    expect(parseWkt('MULTIPOINT((-87.6 41.8), (-118.2 34.0))').type).toBe('MultiPoint');
    expect(parseWkt('MULTILINESTRING((-87.6 41.8, -87.5 41.8), (-118.2 34.0, -118.1 34.0))').type).toBe('MultiLineString');
    expect(parseWkt('MULTIPOLYGON(((-87.7 41.8, -87.6 41.8, -87.6 41.9, -87.7 41.8)), ((-118.3 34, -118.2 34, -118.2 34.1, -118.3 34)))').type).toBe('MultiPolygon');
  });

  it('refuses invalid WKT saying what is wrong', () => {
    expect(badInputMessage(() => parseWkt('not a geometry'))).toMatch(/invalid WKT/);
    expect(badInputMessage(() => parseWkt('POINT(-87.6)'))).toMatch(/invalid WKT/);
    expect(badInputMessage(() => parseWkt('POLYGON((0 0, 1 0, 1 1))'))).toMatch(/at least 4 positions/);
    expect(badInputMessage(() => parseWkt('POLYGON((-87.7 41.8, -87.6 41.8, -87.6 41.9, -87.7 41.9))'))).toMatch(/closed/);
    expect(badInputMessage(() => parseWkt('LINESTRING(-87.6 41.8)'))).toMatch(/invalid WKT|at least 2/);
    expect(badInputMessage(() => parseWkt('GEOMETRYCOLLECTION(POINT(-87.6 41.8))'))).toMatch(/unsupported geometry type GeometryCollection/);
    expect(badInputMessage(() => parseWkt('   '))).toMatch(/empty/);
  });

  it('names the character offset and the text around the first syntax problem', () => {
    const problem = (wkt: string) => {
      try { parseWkt(wkt); } catch (error) {
        expect((error as AppError).code).toBe('BAD_USER_INPUT');
        return { message: (error as AppError).message, ...(error as AppError).extensions } as Record<string, unknown> & { message: string };
      }
      throw new Error(`expected ${wkt} to be refused`);
    };
    const cases: [string, number, string, RegExp][] = [
      ['POLYGON((-87.7 41.8, -87.6 41.8, -87.6 41.9, -87.7 41.8)', 56, 'end of input', /expected ',' or '\)'/],
      ['POINT(-87.6 41.8))', 17, ')', /expected end of input/],
      ['POINT(-87.6 41.8x)', 16, 'x', /expected a number or '\)'/],
      ['POINT(-87..6 41.8)', 9, '..6', /expected a second number/],
      ['CIRCLE(-87.6 41.8)', 0, 'CIRCLE', /expected a geometry type \(POINT, LINESTRING/],
      ['  LINESTRING(-87.6 41.8, -87.5 41.9) and more', 37, 'and', /expected end of input/],
      ['MULTIPOLYGON(((-87.7 41.8, -87.6 41.8, -87.6 41.9, -87.7 41.8)), (-118.3 34, -118.2 34))', 66, '-118.3', /expected '\(' opening a list of positions/],
    ];
    for (const [wkt, offset, found, expected] of cases) {
      const p = problem(wkt);
      expect(p, wkt).toMatchObject({ field: 'geometry', offset, found });
      expect(p.message, wkt).toMatch(new RegExp(`^invalid WKT at offset ${offset}: `));
      expect(p.message, wkt).toMatch(expected);
      expect(wkt.slice(offset)).toMatch(found === 'end of input' ? /^$/ : new RegExp(`^${found.replace(/[.()]/g, '\\$&')}`));
      expect(wkt).toContain(String(p.near).replace(/^…|…$/g, ''));
    }
    expect(problem('MULTIPOINT(' + '-87.6 41.8, '.repeat(10) + '-87.6 41.8 x)')).toMatchObject({ near: '….6 41.8, -87.6 41.8 x)' });
  });

  it('refuses latitudes and longitudes out of range (a hint that WKT is longitude first)', () => {
    expect(badInputMessage(() => parseWkt('POINT(-87.63 141.88)'))).toMatch(/latitude 141.88 is out of range.*longitude first/);
    expect(badInputMessage(() => parseWkt('POINT(-187.63 41.88)'))).toMatch(/longitude -187.63 is out of range/);
    expect(badInputMessage(() => parseWkt('LINESTRING(-87.6 41.8, -87.6 91)'))).toMatch(/latitude 91/);
  });

  it('refuses self-intersecting polygons (turf kinks)', () => {
    expect(badInputMessage(() => parseWkt('POLYGON((-87.7 41.8, -87.6 41.9, -87.6 41.8, -87.7 41.9, -87.7 41.8))'))).toMatch(/intersects itself/);
    expect(badInputMessage(() => parseWkt('MULTIPOLYGON(((-87.7 41.8, -87.6 41.9, -87.6 41.8, -87.7 41.9, -87.7 41.8)))'))).toMatch(/intersects itself/);
  });

  it('refuses geometries with too many positions with a 422 (bounded validation cost)', () => {
    const ring = Array.from({ length: 6000 }, (_, i) => {
      const a = (2 * Math.PI * i) / 6000;
      return `${(-87.7 + 0.1 * Math.cos(a)).toFixed(6)} ${(41.85 + 0.1 * Math.sin(a)).toFixed(6)}`;
    });
    const tooComplex = (fn: () => unknown) => {
      try { fn(); } catch (error) {
        expect((error as AppError).code).toBe('GEOMETRY_TOO_COMPLEX');
        return (error as AppError).message;
      }
      throw new Error('expected a GEOMETRY_TOO_COMPLEX error');
    };
    expect(tooComplex(() => parseWkt(`POLYGON((${[...ring, ring[0]].join(', ')}))`))).toMatch(/limit: vertices, max 5000, got 6001/);
    expect(tooComplex(() => parseWkt(`LINESTRING(${ring.join(', ')})`))).toMatch(/got 6000/);
    expect(parseWkt(`LINESTRING(${ring.slice(0, 4000).join(', ')})`).type).toBe('LineString');
  });

  it('refuses empty geometries', () => {
    for (const wkt of ['POINT EMPTY', 'POLYGON EMPTY', 'LINESTRING EMPTY', 'MULTIPOLYGON EMPTY']) {
      expect(badInputMessage(() => parseWkt(wkt)), wkt).toMatch(/empty|invalid WKT/);
    }
  });

  it('bounds the radius (degrees)', () => {
    expect(checkRadius(undefined)).toBeNull();
    expect(checkRadius(0.01)).toBe(0.01);
    expect(badInputMessage(() => checkRadius(-1))).toMatch(/negative/);
    expect(badInputMessage(() => checkRadius(6))).toMatch(/at most 5/);
    expect(badInputMessage(() => checkRadius(Number.NaN))).toMatch(/number/);
  });
});

describe('buffers and corridors', () => {
  it('buffers a LINESTRING into a corridor of about 2 x radius along the route', () => {
    const line = 'LINESTRING(-87.6766 41.8813, -87.6718 41.8814, -87.6500 41.8815)';
    const { s, sel } = covered(line, 0.002);
    expect(s.radius).toBe(0.002);
    expect(s.area.geometry.type).toBe('Polygon');
    // On the route and 0.001 degree off it: inside; 0.01 degree off it: outside.
    expect(booleanPointInPolygon([-87.66, 41.8815], s.area)).toBe(true);
    expect(booleanPointInPolygon([-87.66, 41.8825], s.area)).toBe(true);
    expect(booleanPointInPolygon([-87.66, 41.8915], s.area)).toBe(false);
    // A corridor: long and thin (length ~2.2 km, width ~2 x 0.002 deg ~ 0.4 km).
    const km2 = turfArea(s.area) / 1e6;
    expect(km2).toBeGreaterThan(0.6);
    expect(km2).toBeLessThan(1.6);
    expect(sel?.resolution).toBe(9);
    expect(sel?.cells).toContain(latLngToCell(41.8815, -87.66, 9));
    expect(sel?.cells).not.toContain(latLngToCell(41.8915, -87.66, 9));
  });

  it('buffers points and lines without radius by the default (the road itself); polygons are used as given', () => {
    expect(searchArea('POINT(-87.63 41.88)').radius).toBe(DEFAULT_LINEAR_RADIUS);
    expect(searchArea('POLYGON((-87.7 41.8, -87.6 41.8, -87.6 41.9, -87.7 41.8))').radius).toBeNull();
  });
});

describe('coverage', () => {
  it('uses the real California and Illinois boundaries', () => {
    expect(stateBoundaries().map((b) => b.state.code)).toEqual(['CA', 'IL']);
    expect(stateAt(-118.24, 34.05)?.code).toBe('CA');
    expect(stateAt(-87.63, 41.88)?.code).toBe('IL');
    expect(stateAt(-115.14, 36.17)).toBeNull(); // Las Vegas
    expect(stateAt(-86.9, 41.88)).toBeNull(); // Lake Michigan / Indiana
  });

  it('an area outside both states is OUTSIDE with no cells', () => {
    const { c, sel } = covered('POINT(-115.14 36.17)', 0.1);
    expect(c.status).toBe('OUTSIDE');
    expect(c.message).toMatch(/outside coverage/);
    expect(sel).toBeNull();
  });

  it('an area straddling the California-Nevada border answers for the California part only', () => {
    const { c, sel } = covered('POLYGON((-120.5 38.5, -119 38.5, -119 39.5, -120.5 39.5, -120.5 38.5))');
    expect(c.status).toBe('PARTIAL');
    expect(c.parts.map((p) => p.state.code)).toEqual(['CA']);
    expect(c.coveredFraction).toBeGreaterThan(0.2);
    expect(c.coveredFraction).toBeLessThan(0.8);
    expect(c.message).toMatch(/partly outside coverage.*California/);
    // Cells in California are selected, cells in Nevada are not; only border cells have their centre outside.
    expect(sel!.cells).toContain(latLngToCell(38.7, -120.3, sel!.resolution));
    expect(sel!.cells).not.toContain(latLngToCell(39.3, -119.2, sel!.resolution));
    const outside = sel!.cells.filter((cell) => { const [lat, lon] = cellToLatLng(cell); return stateAt(lon, lat) === null; });
    expect(outside.length / sel!.cells.length).toBeLessThan(0.1);
  });

  it('an area holding a whole state is that state, with the same cells as the clipped area', () => {
    for (const [i, b] of stateBoundaries().entries()) {
      // The state's outline, and a box around it reaching into the neighbouring states.
      const [w, s, e, n] = b.bbox;
      for (const wkt of [geojsonToWKT(b.feature.geometry), `POLYGON((${w - 0.5} ${s - 0.5}, ${e + 0.5} ${s - 0.5}, ${e + 0.5} ${n + 0.5}, ${w - 0.5} ${n + 0.5}, ${w - 0.5} ${s - 0.5}))`]) {
        const { c, sel } = covered(wkt);
        const part = c.parts.find((p) => p.state.code === b.state.code)!;
        expect(part.area).toBe(b.feature);
        expect(part.areaKm2).toBeCloseTo(b.km2, 3);
        // The same cells as covering the intersection itself (the state's outline is covered once per thread).
        const clipped = intersect(featureCollection([searchArea(wkt).area, b.feature])) as Feature<Polygon | MultiPolygon>;
        expect(clipped.geometry).not.toBe(b.feature.geometry);
        expect(selectCells([clipped], part.areaKm2).cells.sort()).toEqual(selectCells([b.feature], b.km2).cells.sort());
        if (c.parts.length === 1) expect(sel!.cells.length).toBe([1715, 677][i]);
      }
    }
    // A box cutting a strip off California is not the state.
    const { c } = covered('POLYGON((-124 32, -114 32, -114 42.1, -124 42.1, -124 32))');
    expect(c.parts[0].area).not.toBe(stateBoundaries()[0].feature);
  });

  it('an area inside a state is COVERED', () => {
    const { c } = covered('POLYGON((-87.75 41.8, -87.65 41.8, -87.65 41.9, -87.75 41.9, -87.75 41.8))');
    expect(c.status).toBe('COVERED');
    expect(c.coveredFraction).toBe(1);
  });
});

describe('resolution choice', () => {
  it('picks the finest resolution whose cell count stays under the bound', () => {
    const block = covered('POLYGON((-87.6305 41.8775, -87.6290 41.8775, -87.6290 41.8785, -87.6305 41.8785, -87.6305 41.8775))');
    expect(block.sel!.resolution).toBe(9);
    expect(block.sel!.cells.length).toBeGreaterThan(0); // a block smaller than a cell still gets its cell
    const city = covered('POLYGON((-87.94 41.64, -87.52 41.64, -87.52 42.02, -87.94 42.02, -87.94 41.64))');
    expect(city.sel!.resolution).toBe(7);
    const california = covered(geojsonToWKT(stateBoundaries()[0].feature.geometry));
    expect(california.c.status).toBe('COVERED');
    expect(california.sel!.resolution).toBe(5);
    for (const x of [block, city, california]) {
      expect(x.sel!.cells.length).toBeLessThanOrEqual(MAX_CELLS);
      expect(x.sel!.cells.every((cell) => getResolution(cell) === x.sel!.resolution)).toBe(true);
    }
  });

  it('a smaller bound moves the same area to a coarser resolution', () => {
    const { c } = covered('POLYGON((-87.7 41.8, -87.6 41.8, -87.6 41.9, -87.7 41.9, -87.7 41.8))');
    const areas = c.parts.map((p) => p.area);
    expect(selectCells(areas, c.coveredKm2).resolution).toBe(9);
    expect(selectCells(areas, c.coveredKm2, 100).resolution).toBe(7);
    expect(selectCells(areas, c.coveredKm2, 5).resolution).toBe(5);
  });
});
