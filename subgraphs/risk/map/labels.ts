/**
 * Place labels that do not overlap: largest place first, each tried right, left, above and below its
 * dot, kept at the first position that stays inside the map and clear of the labels and dots already
 * placed, else left out (a smaller place yields to a larger one).
 */

export interface Extent { x0: number; y0: number; x1: number; y1: number }

export interface Label<P> {
  place: P;
  x: number;
  y: number;
  anchor: 'start' | 'end' | 'middle';
  fontSize: number;
}

type Box = [number, number, number, number];

const fontSizeOf = (population: number) => (population >= 1_000_000 ? 13 : population >= 300_000 ? 12 : 11);
/** Helvetica's mean advance is about 0.55 em; generous for capitals. */
const textWidth = (text: string, fontSize: number) => text.length * fontSize * 0.58;
const overlaps = (a: Box, b: Box) => a[0] < b[2] && a[2] > b[0] && a[1] < b[3] && a[3] > b[1];

export function placeLabels<P extends { name: string; population: number; x: number; y: number }>(places: P[], extent: Extent): Label<P>[] {
  const dots: Box[] = places.map((p) => [p.x - 3, p.y - 3, p.x + 3, p.y + 3]);
  const taken: Box[] = [];
  const labels: Label<P>[] = [];
  for (const place of [...places].sort((a, b) => b.population - a.population)) {
    const fontSize = fontSizeOf(place.population);
    const w = textWidth(place.name, fontSize), h = fontSize;
    const candidates: { box: Box; x: number; y: number; anchor: Label<P>['anchor'] }[] = [
      { box: [place.x + 5, place.y - h / 2, place.x + 5 + w, place.y + h / 2], x: place.x + 5, y: place.y + h * 0.35, anchor: 'start' },
      { box: [place.x - 5 - w, place.y - h / 2, place.x - 5, place.y + h / 2], x: place.x - 5, y: place.y + h * 0.35, anchor: 'end' },
      { box: [place.x - w / 2, place.y - 5 - h, place.x + w / 2, place.y - 5], x: place.x, y: place.y - 5 - h * 0.15, anchor: 'middle' },
      { box: [place.x - w / 2, place.y + 5, place.x + w / 2, place.y + 5 + h], x: place.x, y: place.y + 5 + h * 0.85, anchor: 'middle' },
    ];
    const fits = candidates.find(({ box }) => box[0] >= extent.x0 && box[2] <= extent.x1 && box[1] >= extent.y0 && box[3] <= extent.y1
      && !taken.some((t) => overlaps(t, box)) && !dots.some((d) => overlaps(d, box)));
    if (!fits) continue;
    taken.push(fits.box);
    labels.push({ place, x: fits.x, y: fits.y, anchor: fits.anchor, fontSize });
  }
  return labels;
}
