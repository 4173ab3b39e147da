// When the live view may take the photo by itself: the dice still, no hand in view, all of them
// in view and none cut by the frame's edge, read the same (same dice, same places, same values) in the
// last two frames. Pure functions of the frames' readings and motion; no DOM.

export const STILL_LEVEL = 2.5; // mean grey change per pixel (0-255) of the view's 64-px copy under which it is still
const MOVED_LEVEL = 6; // ... over which the dice were touched: a new roll may be taken
const SAME_PLACE = 0.04; // a die stays in its place: its centre moves less than this share of the frame's long side
const EDGE = 0.01; // a box this near the frame's edge (share of its side) is cut by it

// `history`: the last frames, oldest first, each {reading, motion, hand}; `expected`: the dice that
// should be in view. Returns {state, message}: state "steady" when the photo may be taken.
export function steadyAdvice(history, expected) {
  const latest = history[history.length - 1];
  if (!latest) return { state: "none", message: "Point the camera at the dice." };
  const seen = frameAdvice(latest, expected);
  if (seen) return seen;
  const n = latest.reading.dice.length;
  const before = history[history.length - 2];
  if (!before || before.hand || latest.motion > STILL_LEVEL || !sameDice(before.reading, latest.reading)) {
    return { state: "moving", message: `${countText(n, expected)} — hold still` };
  }
  return { state: "steady", message: `${countText(n, expected)} — still` };
}

// What one frame (or photo) shows that stops the photo: a hand, no dice, a die cut by the edge,
// fewer or more dice than expected ({state, message}); null when it shows none of these.
export function frameAdvice(latest, expected) {
  const dice = latest.reading.dice;
  const n = dice.length;
  if (latest.hand) return { state: "hand", message: "a hand is in view — take it away to take the photo" };
  if (!n) return { state: "none", message: "No dice in view: point the camera at the dice." };
  if (dice.some((die) => cutByEdge(die.box, latest.reading))) {
    return { state: "cut", message: `${countText(n, expected)}, one cut by the edge — move back a little` };
  }
  if (n < expected) return { state: "few", message: `${countText(n, expected)} — move back a little` };
  if (n > expected) {
    return { state: "many", message: `${n} dice in view, ${expected} expected — move the dice set aside out of view` };
  }
  return null;
}

// The view changed enough that the dice were touched (a new roll, or a hand).
export function moved(motion) {
  return Number.isFinite(motion) && motion > MOVED_LEVEL;
}

// The same dice in the same places with the same values (where the reader is sure of both: an
// unsure die's reading may flicker from frame to frame; the photo's reading decides it).
// The two readings may be of the same view at different sizes (a frame, the photo held).
export function sameDice(a, b) {
  if (a.dice.length !== b.dice.length) return false;
  const left = [...a.dice];
  const sameValue = (x, y) => x.token === y.token || x.uncertain || y.uncertain;
  return b.dice.every((die) => {
    const here = centre(die.box, b);
    const i = left.findIndex((other) => sameValue(other, die) && Math.hypot(...minus(centre(other.box, a), here)) < SAME_PLACE);
    if (i < 0) return false;
    left.splice(i, 1);
    return true;
  });
}

function cutByEdge([x0, y0, x1, y1], { width, height }) {
  const mx = EDGE * width;
  const my = EDGE * height;
  return x0 <= mx || y0 <= my || x1 >= width - mx || y1 >= height - my;
}

// A box's centre in shares of its reading's long side.
function centre([x0, y0, x1, y1], { width, height }) {
  const side = Math.max(width, height);
  return [(x0 + x1) / 2 / side, (y0 + y1) / 2 / side];
}

function minus([a, b], [c, d]) {
  return [a - c, b - d];
}

function countText(n, expected) {
  return `${n} of ${expected} dice`;
}
