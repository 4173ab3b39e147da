// The photo's outlines and the dice crops: drawn from the reading the server sends (boxes and
// polygons in the upright photo's pixels). Pure functions returning HTML/SVG; no state.

import { esc } from "./dom.js";

const LABEL_PX = 22; // a number label's side on screen, in CSS pixels, whatever the photo's size
const GAP_PX = 2;
export const CROP_PX = 52; // a chip's crop, in CSS pixels (app.css .chip .crop)
const CROP_MARGIN = 1.15; // the crop shows a little of the table around the face

// The outlines, each die numbered as its chip is. `scale` is CSS pixels per photo pixel, so
// that a label keeps its size on screen; labels are placed where they cover no die and no
// other label, so a numeral on the photo is never hidden by another die's number.
export function outlineSvg(reading, dice, scale, describe) {
  const { width, height } = reading;
  const used = new Map(dice.map((die, i) => [die.source, i]));
  const stroke = 2.5 / scale;
  const boxes = reading.dice.map((read) => read.box);
  const labelled = dice.map((die, index) => ({ index, source: die.source })).filter((d) => d.source !== null && d.source !== undefined);
  const spots = placeLabels(boxes, labelled.map((d) => d.source), LABEL_PX / scale, GAP_PX / scale, width, height);
  const at = new Map(labelled.map((d, k) => [d.source, { index: d.index, spot: spots[k] }]));
  return reading.dice.map((read, source) => {
    const index = used.get(source);
    const points = read.polygon.map(([x, y]) => `${x},${y}`).join(" ");
    const cls = index === undefined ? "removed" : dice[index].uncertain ? "uncertain" : "read";
    const label = index === undefined ? "removed" : describe(dice[index].token);
    const mark = at.get(source);
    return `<g class="die-outline ${cls}" data-source="${source}" role="button" aria-label="${index === undefined ? "Removed: not a die" : `Die ${index + 1} read as ${esc(label)}`}">
      <polygon points="${points}" stroke-width="${stroke}"></polygon>
      ${mark ? labelSvg(mark.spot, mark.index + 1, read.box, LABEL_PX / scale, stroke) : ""}
    </g>`;
  }).join("");
}

function labelSvg(spot, number, box, side, stroke) {
  const [x, y] = spot;
  const cx = x + side / 2;
  const cy = y + side / 2;
  // A label set further off than beside its die gets a thin line to it.
  const [nx, ny] = nearestPoint(box, cx, cy);
  const far = Math.hypot(nx - cx, ny - cy) > side;
  return `${far ? `<line class="leader" x1="${cx}" y1="${cy}" x2="${nx}" y2="${ny}" stroke-width="${stroke * 0.6}"></line>` : ""}
    <g class="num"><rect x="${x}" y="${y}" width="${side}" height="${side}" rx="${side / 4}"></rect>
    <text x="${cx}" y="${cy}" font-size="${side * 0.68}" dominant-baseline="central" text-anchor="middle">${number}</text></g>`;
}

// For each die to label (its box), the top-left corner of a side x side square beside it,
// inside the photo, overlapping no die's box and no label placed before; when every spot
// near it is taken, the least covered one. Greedy, in chip order.
export function placeLabels(boxes, sources, side, gap, width, height) {
  const placed = [];
  return sources.map((source) => {
    let best = null;
    for (const [x, y] of candidates(boxes[source], side, gap)) {
      const spot = [clamp(x, 0, width - side), clamp(y, 0, height - side)];
      const cost = coverCost(spot, side, boxes, placed, gap);
      if (!best || cost < best.cost) best = { spot, cost };
      if (cost === 0) break;
    }
    placed.push(best.spot);
    return best.spot;
  });
}

function candidates([x0, y0, x1, y1], side, gap) {
  const out = [];
  for (const ring of [0, 1, 2]) {
    const d = gap + ring * side;
    const mx = (x0 + x1 - side) / 2;
    const my = (y0 + y1 - side) / 2;
    out.push(
      [x0, y0 - d - side], [x1 - side, y0 - d - side], [mx, y0 - d - side], // above
      [x0, y1 + d], [x1 - side, y1 + d], [mx, y1 + d], // below
      [x0 - d - side, y0], [x1 + d, y0], [x0 - d - side, my], [x1 + d, my], // beside
      [x0 - d - side, y0 - d - side], [x1 + d, y0 - d - side], [x0 - d - side, y1 + d], [x1 + d, y1 + d], // corners
    );
  }
  return out;
}

function coverCost([x, y], side, boxes, placed, gap) {
  const me = [x, y, x + side, y + side];
  let cost = 0;
  for (const b of boxes) cost += overlap(me, [b[0] - gap, b[1] - gap, b[2] + gap, b[3] + gap]);
  for (const [px, py] of placed) cost += 4 * overlap(me, [px - gap, py - gap, px + side + gap, py + side + gap]);
  return cost;
}

function overlap(a, b) {
  const w = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
  const h = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  return w > 0 && h > 0 ? w * h : 0;
}

function nearestPoint([x0, y0, x1, y1], x, y) {
  return [clamp(x, x0, x1), clamp(y, y0, y1)];
}

function clamp(v, lo, hi) {
  return Math.max(lo, Math.min(hi, v));
}

// CSS for a chip's crop: the photo as a background, scaled and shifted so that the square
// around the die's box fills CROP_PX.
export function cropStyle(url, reading, box) {
  const [x0, y0, x1, y1] = box;
  const side = Math.max(x1 - x0, y1 - y0) * CROP_MARGIN;
  const k = CROP_PX / side;
  const left = ((x0 + x1) / 2 - side / 2) * k;
  const top = ((y0 + y1) / 2 - side / 2) * k;
  return `background-image:url('${url}');background-size:${(reading.width * k).toFixed(1)}px ${(reading.height * k).toFixed(1)}px;`
    + `background-position:${(-left).toFixed(1)}px ${(-top).toFixed(1)}px`;
}
