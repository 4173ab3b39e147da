// Dice chips: the value on its ink colour, plus the colour's letter and a pattern, so the
// colour never rests on hue alone (colour-blind players).

import { esc } from "./dom.js";

// The token's letter for a wild (dice notation, as companion/dice.py writes it).
export const WILD = "W";
// Each colour has its own style (app.css); a token names it by its first letter.
const BY_LETTER = { r: "red", o: "orange", g: "green", b: "blue" };

// "7b" -> {value: "7", colour: "blue"}; tokens come from the server, so they are well formed.
export function parseToken(token) {
  const m = /^(\d+|W)([rogb])$/i.exec(token);
  if (!m) return null;
  return { value: m[1].toUpperCase(), colour: BY_LETTER[m[2].toLowerCase()] };
}

export function makeToken(value, colour) {
  return `${value}${colour[0]}`;
}

export function colourLetter(colour) {
  return colour[0].toUpperCase();
}

export function describe(token) {
  const face = parseToken(token);
  if (!face) return token;
  const value = face.value === "W" ? "wild" : face.value;
  return `${value} ${face.colour}`;
}

// One chip as HTML. `extra` adds classes (uncertain: to check; doubted: the reader was unsure,
// but it cannot change the result; unused, selected) and a group badge;
// `crop` (CSS from overlay.cropStyle) shows the die as the photo shows it, above its reading,
// and `number` is the die's number on the photo's outlines.
export function chipHtml(token, { index = null, uncertain = false, doubted = false, group = null, unused = false, small = false, crop = null, number = null } = {}) {
  const face = parseToken(token) || { value: "?", colour: "none" };
  const classes = ["chip", `c-${face.colour}`];
  if (uncertain) classes.push("uncertain");
  if (doubted) classes.push("doubted");
  if (unused) classes.push("unused");
  if (small) classes.push("small");
  if (crop) classes.push("has-crop");
  const label = `${number === null ? "" : `Die ${number}: `}${describe(token)}${uncertain ? ", uncertain: please check" : doubted ? ", the reader was unsure, but it cannot change the result" : ""}${group ? `, group ${group}` : ""}`;
  const tag = index === null ? "span" : "button";
  const attrs = index === null ? `role="img"` : `type="button" data-index="${index}"`;
  return `<${tag} class="${classes.join(" ")}" ${attrs} aria-label="${esc(label)}" data-token="${esc(token)}">
    ${crop ? `<span class="crop" style="${esc(crop)}" aria-hidden="true"></span>` : ""}
    ${number === null ? "" : `<span class="n" aria-hidden="true">${number}</span>`}
    <span class="face"><span class="v">${esc(face.value)}</span><span class="l">${colourLetter(face.colour)}</span></span>
    ${uncertain ? '<span class="q" aria-hidden="true">?</span>' : ""}
    ${group ? `<span class="g" aria-hidden="true">${esc(group)}</span>` : ""}
  </${tag}>`;
}
