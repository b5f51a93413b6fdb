/**
 * The interactive Risk Index map page (subgraphs/risk/map-page/, served through gateway/pages/): offline by
 * default, and with MAP_TILE_URL its CSP allows images from that tile server only. The page in a browser: test/risk/map-browser.test.ts.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { securityHeadersPlugin } from '../../gateway/http/security-headers.ts';
import { areaPagesPlugin } from '../../gateway/pages/index.ts';
import { tileSource } from '../../subgraphs/risk/map-page/index.ts';
import { loadConfig } from '../../subgraphs/platform/config.ts';

async function page(env: Record<string, string> = {}) {
  const app = Fastify();
  await app.register(securityHeadersPlugin);
  await app.register(areaPagesPlugin, { config: loadConfig({ NODE_ENV: 'test', ...env }) });
  const res = await app.inject({ method: 'GET', url: '/riskIndex/v1/map/view?geometry=POINT(-87.6298%2041.8781)&radius=0.02' });
  const asset = await app.inject({ method: 'GET', url: '/map/assets/leaflet.js' });
  await app.close();
  return { res, asset };
}

describe('GET /riskIndex/v1/map/view', () => {
  it('serves the page and Leaflet from this origin, with no basemap and no inline script by default', async () => {
    const { res, asset } = await page();
    expect(res.statusCode).toBe(200);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("img-src 'self';");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.body).toContain('<script src="/map/assets/leaflet.js"></script>');
    expect(res.body).toContain('"tileUrl":null');
    expect(asset.statusCode).toBe(200);
    expect(asset.body).toContain('Leaflet 1.9.4');
  });

  it('with MAP_TILE_URL, hands the template to the page and allows images from its server only', async () => {
    const { res } = await page({ MAP_TILE_URL: 'https://{s}.tiles.example.org/osm/{z}/{x}/{y}.png' });
    expect(String(res.headers['content-security-policy'])).toContain("img-src 'self' https://*.tiles.example.org;");
    expect(res.body).toContain('"tileUrl":"https://{s}.tiles.example.org/osm/{z}/{x}/{y}.png"');
    expect(tileSource('http://127.0.0.1:8080/{z}/{x}/{y}.png')).toBe('http://127.0.0.1:8080');
  });

  it('refuses a MAP_TILE_URL that is not an http(s) template with {z}, {x} and {y}', () => {
    expect(() => loadConfig({ NODE_ENV: 'test', MAP_TILE_URL: 'https://tiles.example.org/{z}/{x}.png' })).toThrow(/MAP_TILE_URL/);
    expect(() => loadConfig({ NODE_ENV: 'test', MAP_TILE_URL: "javascript:alert('{z}{x}{y}')" })).toThrow(/MAP_TILE_URL/);
  });
});
