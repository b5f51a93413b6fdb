/* global window, document, L */
// The interactive Risk Index map (a served file, not inline: the page's CSP runs no inline script).
// Reads geometry and radius from the page's query string, fetches the GeoJSON layers and draws them.

const config = JSON.parse(document.getElementById('map-config').textContent);
const status = document.getElementById('status');
const info = document.getElementById('info');

const text = (tag, content, className) => {
  const el = document.createElement(tag);
  el.textContent = content;
  if (className) el.className = className;
  return el;
};
const number = (v, digits) => Number(v).toLocaleString('en-US', { maximumFractionDigits: digits });

/** The figures of one cell, as text nodes (never HTML). */
function showCell(p) {
  info.replaceChildren(
    text('strong', `Cell ${p.h3} (H3 resolution ${p.resolution})`),
    text('div', `Index ${number(p.index, 1)} / 100`, 'figure-index'),
    text('div', `${p.fatalCrashes} fatal crashes, ${p.fatalities} killed (2013-2015)`),
    text('div', `${number(p.fatalCrashesPerKm2Year, 3)} fatal crashes and ${number(p.fatalitiesPerKm2Year, 3)} fatalities per km² per year`),
  );
}

function legend(l) {
  const box = document.createElement('div');
  box.className = 'legend';
  box.append(text('strong', 'Cell index'));
  for (const [color, label] of [[l.noCrash, 'no fatal crash'], ...l.bands.map((b) => [b.color, `${b.from}-${b.to}`])]) {
    const row = document.createElement('div');
    const swatch = text('span', '', 'swatch');
    swatch.style.background = color;
    row.append(swatch, document.createTextNode(label));
    box.append(row);
  }
  return box;
}

/** Hides the labels of smaller places where they would overlap a larger place's (Leaflet places tooltips without looking). */
function declutter(labels) {
  const shown = [];
  for (const marker of labels) {
    const el = marker.getTooltip().getElement();
    if (!el) continue;
    el.style.visibility = 'visible';
    const r = el.getBoundingClientRect();
    const clear = shown.every((s) => r.right < s.left || r.left > s.right || r.bottom < s.top || r.top > s.bottom);
    el.style.visibility = clear ? 'visible' : 'hidden';
    if (clear) shown.push(r);
  }
}

async function start() {
  const params = new window.URLSearchParams(window.location.search);
  if (!params.get('geometry') && !params.get('wkt')) {
    status.textContent = 'Give the area in the address: ?geometry=<WKT>&radius=<degrees>, e.g. ?geometry=POINT(-87.6298 41.8781)&radius=0.02';
    return;
  }
  const res = await window.fetch(`${config.layersPath}?${params}`, { headers: { accept: 'application/geo+json' } });
  const body = await res.json();
  if (!res.ok) {
    status.textContent = `${res.status}: ${body.detail || body.title || 'error'}`;
    return;
  }
  const map = L.map('map', { zoomSnap: 0.25, preferCanvas: false });
  map.attributionControl.setPrefix('<a href="https://leafletjs.com">Leaflet</a>');
  map.attributionControl.addAttribution('Crashes: NHTSA FARS 2013-2015 · Boundaries: U.S. Census Bureau (us-atlas) · Places: GeoNames (CC BY 4.0) · Cells: H3');
  if (config.tileUrl) L.tileLayer(config.tileUrl, { maxZoom: 19, attribution: `Basemap: ${new window.URL(config.tileUrl.replace(/\{[^}]*\}/g, 'x')).hostname}` }).addTo(map);
  const of = (layer) => ({ type: 'FeatureCollection', features: body.features.filter((f) => f.properties.layer === layer) });

  L.geoJSON(of('county'), {
    style: { color: '#6b6b6b', weight: 1, dashArray: '4 3', fill: false, interactive: false },
  }).addTo(map);
  const cells = L.geoJSON(of('cell'), {
    style: (f) => ({ color: '#ffffff', weight: 0.5, fillColor: f.properties.color, fillOpacity: f.properties.index ? 0.85 : 0.45 }),
    onEachFeature: (f, layer) => {
      layer.on('add', () => layer.getElement().setAttribute('data-cell', f.properties.h3));
      layer.on('mouseover', () => { showCell(f.properties); layer.setStyle({ weight: 2, color: '#1b1b1b' }); layer.bringToFront(); });
      layer.on('mouseout', () => layer.setStyle({ weight: 0.5, color: '#ffffff' }));
    },
  }).addTo(map);
  const area = L.geoJSON(of('area'), { style: { color: '#1f4e9c', weight: 2, dashArray: '6 4', fill: false, interactive: false } }).addTo(map);
  // Names go in as text nodes: Leaflet would parse a string as HTML.
  const places = L.geoJSON(of('place'), {
    pointToLayer: (f, latlng) => L.circleMarker(latlng, { radius: 3, color: '#ffffff', weight: 1, fillColor: '#222222', fillOpacity: 1, interactive: false })
      .bindTooltip(text('span', f.properties.name), { permanent: true, direction: 'right', className: 'place-label', offset: [4, 0] }),
  }).addTo(map);

  map.fitBounds(area.getBounds(), { padding: [10, 10] });
  const labels = places.getLayers().sort((a, b) => b.feature.properties.population - a.feature.properties.population);
  map.on('zoomend moveend', () => declutter(labels));
  declutter(labels);
  L.control.scale({ imperial: false }).addTo(map);
  const legendControl = L.control({ position: 'bottomright' });
  legendControl.onAdd = () => legend(body.legend);
  legendControl.addTo(map);
  document.getElementById('title').textContent = body.legend.title;
  status.textContent = `${cells.getLayers().length} cells. Hover a cell for its figures; scroll or use +/- to zoom.`;
  document.body.dataset.ready = 'true';
}

start().catch((error) => { status.textContent = `Could not load the map: ${error.message}`; });
