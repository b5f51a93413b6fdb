declare module '@terraformer/wkt' {
  import type { Geometry } from 'geojson';
  /** Parses WKT into a GeoJSON geometry; throws on invalid WKT. */
  export function wktToGeoJSON(wkt: string): Geometry;
  /** Serialises a GeoJSON geometry as WKT. */
  export function geojsonToWKT(geometry: Geometry): string;
}
