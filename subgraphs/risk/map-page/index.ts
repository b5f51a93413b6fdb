/**
 * `GET /riskIndex/v1/map/view?geometry=<WKT>&radius=<degrees>`: the interactive Risk Index map. Leaflet
 * (from node_modules, no CDN) draws the layers of GET /riskIndex/v1/map/layers: H3 cells coloured by
 * index (hover one for its figures), county boundaries, places of 100,000 people or more, the search
 * area. Offline by default; with MAP_TILE_URL a basemap comes from that tile server, which the page's
 * CSP then allows for images.
 */
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { PageAsset, PageKit } from '../../platform/page-kit.ts';
import { RISK_MAP_LAYERS_PATH, RISK_MAP_VIEW_PATH } from '../rest.ts';

export const MAP_ASSET_PREFIX = '/map/assets/';

const assets = ({ packageFile, contentTypes: { js, css } }: PageKit): Record<string, PageAsset> => ({
  'leaflet.js': { path: packageFile('leaflet', 'dist/leaflet.js'), type: js },
  'leaflet.css': { path: packageFile('leaflet', 'dist/leaflet.css'), type: css },
  'map-view.js': { path: fileURLToPath(new URL('./page/map-view.js', import.meta.url)), type: js },
  'map-view.css': { path: fileURLToPath(new URL('./page/map-view.css', import.meta.url)), type: css },
});

/**
 * The CSP source of a tile URL template's server: `{s}` (a subdomain) becomes a `*.` wildcard.
 * The config schema admits only http(s) templates without quotes, spaces or angle brackets.
 */
export function tileSource(template: string): string {
  const url = new URL(template.replaceAll('{s}', 'tile-subdomain').replace(/\{[^}]*\}/g, '0'));
  return `${url.protocol}//${url.host.replace('tile-subdomain', '*')}`;
}

/** `</script>` inside inline JSON would end the script element. */
const inlineJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

export function mapViewPage(tileUrl: string | undefined): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Risk Index map · Fleet risk graph</title>
<link rel="stylesheet" href="${MAP_ASSET_PREFIX}leaflet.css">
<link rel="stylesheet" href="${MAP_ASSET_PREFIX}map-view.css">
</head>
<body>
<header><h1 id="title">Risk Index map</h1><p id="status">Loading…</p></header>
<div id="map"></div>
<aside id="info">Hover a cell for its figures.</aside>
<script id="map-config" type="application/json">${inlineJson({ layersPath: RISK_MAP_LAYERS_PATH, tileUrl: tileUrl ?? null })}</script>
<script src="${MAP_ASSET_PREFIX}leaflet.js"></script>
<script src="${MAP_ASSET_PREFIX}map-view.js"></script>
</body>
</html>
`;
}

/** The risk area's pages (SubgraphDefinition.pages): the map and the files it loads. */
export const mapViewPages = (kit: PageKit) => async (app: FastifyInstance) => {
  const { config } = kit;
  const page = mapViewPage(config.MAP_TILE_URL);
  const files = assets(kit);
  // The layers come from this origin; tiles, when configured, from their server.
  const headers = kit.pageHeaders({ 'img-src': ["'self'", ...(config.MAP_TILE_URL ? [tileSource(config.MAP_TILE_URL)] : [])] });
  const send = kit.assetSender();
  app.get(RISK_MAP_VIEW_PATH, { config: { securityHeaders: headers } }, async (_request, reply) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(page));
  app.get<{ Params: { file: string } }>(`${MAP_ASSET_PREFIX}:file`, async (request, reply) => {
    const asset = files[request.params.file];
    if (!asset) return reply.callNotFound();
    return send(request, reply, asset);
  });
};
