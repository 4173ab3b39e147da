// Pointing at a die the reader missed: after a die is added by hand to a photo's dice, one tap
// where it lies on the photo gives it a box there, so that it is stored with that box and the
// dice set learns from it like any read die (the server takes it as "boxes" with the confirm).
// The box is a square of the photo's read dice's median size about the tap. Pointing is
// offered, never required: Skip, or any other action, leaves the die typed in without a place.

import { esc } from "./dom.js";

const FALLBACK_SIDE = 0.06; // of the photo's shorter side, where no die was read to size the box by

export class Pointer {
  // `figure`: the turn screen's photo figure (its .photo-wrap, #overlay); `onPointed()`: redraw.
  constructor(figure, onPointed) {
    this.figure = figure;
    this.onPointed = onPointed;
    this.die = null; // the die waiting for its place
    this.reading = null;
    this.prompt = document.createElement("p");
    this.prompt.className = "point-note";
    this.prompt.id = "point-note";
    this.prompt.setAttribute("role", "status");
    this.prompt.hidden = true;
    figure.before(this.prompt);
    // capture: a tap while pointing places the die, and is no tap on a read die's outline
    figure.querySelector(".photo-wrap").addEventListener("click", (event) => this.tap(event), { capture: true });
    this.prompt.addEventListener("click", (event) => { if (event.target.closest("#point-skip")) this.cancel(); });
  }

  // Ask where `die` (just added by hand) lies on the photo of `reading`.
  ask(die, reading, number) {
    this.die = die;
    this.reading = reading;
    this.prompt.innerHTML = `Tap where die ${number} lies on the photo, so the dice set learns it too.
      <button type="button" class="btn" id="point-skip">Skip</button>`;
    this.prompt.hidden = false;
    this.figure.classList.add("pointing");
    this.figure.scrollIntoView({ block: "nearest" });
  }

  // Stop asking once the die is gone from the dice, or the photo is another.
  forget(dice, photo) {
    if (this.die && (!photo || photo.reading !== this.reading || !dice.includes(this.die))) this.cancel();
  }

  cancel() {
    this.die = null;
    this.reading = null;
    this.prompt.hidden = true;
    this.figure.classList.remove("pointing");
  }

  tap(event) {
    if (!this.die) return;
    event.stopPropagation();
    event.preventDefault();
    const svg = this.figure.querySelector("svg");
    const matrix = svg.getScreenCTM();
    if (!matrix) return;
    const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(matrix.inverse());
    const { width, height } = this.reading;
    if (point.x < 0 || point.y < 0 || point.x > width || point.y > height) return; // beside the photo
    this.die.box = boxAbout(point.x, point.y, this.reading);
    this.cancel();
    this.onPointed();
  }
}

// A square about (x, y) of the read dice's median side, inside the photo.
export function boxAbout(x, y, reading) {
  const { width, height } = reading;
  const sides = reading.dice.map((d) => Math.max(d.box[2] - d.box[0], d.box[3] - d.box[1])).sort((a, b) => a - b);
  const side = Math.min(sides.length ? sides[Math.floor(sides.length / 2)] : FALLBACK_SIDE * Math.min(width, height),
    width, height);
  const x0 = Math.min(Math.max(0, x - side / 2), width - side);
  const y0 = Math.min(Math.max(0, y - side / 2), height - side);
  return [x0, y0, x0 + side, y0 + side].map((v) => Math.round(v * 10) / 10);
}

// The confirm's "boxes": per die, where a die typed in was pointed at (null for the rest).
export function pointedBoxes(dice) {
  return dice.map((die) => (die.source === null && die.box ? die.box : null));
}

// The pointed dice's boxes on the photo, numbered as their chips.
export function pointedSvg(dice, scale) {
  const stroke = 2.5 / scale;
  return dice.map((die, i) => {
    if (die.source !== null || !die.box) return "";
    const [x0, y0, x1, y1] = die.box;
    return `<g class="die-outline pointed" aria-label="Die ${i + 1}, pointed at">
      <rect x="${x0}" y="${y0}" width="${x1 - x0}" height="${y1 - y0}" stroke-width="${stroke}"></rect>
      <title>${esc(`Die ${i + 1}`)}</title></g>`;
  }).join("");
}
