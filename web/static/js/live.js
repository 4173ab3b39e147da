// The live view: the camera, with what the reader sees in it drawn over it a few times a second,
// and the photo taken by itself once the dice are still and read the same in frames running.
// Each frame is read by the server (POST /api/games/ID/frames), by the same reader as photos, so
// the view and the chips have one source of truth. When the view settles, one frame goes at the
// size the reader reads photos (held-photos): read in full as a photo while the next frames tell
// whether the dice lay still, and kept as the roll's photo if they did (no second read, no upload).
// Where two frames settle it and no held photo is one of them, the camera's best picture is held
// and kept the same way.

import { cameraMessage, cameraUsable } from "./camera.js";
import { describe } from "./dice.js";
import { esc } from "./dom.js";
import { preparePhoto } from "./photo.js";
import { frameAdvice, moved, STILL_LEVEL, steadyAdvice } from "./steady.js";

const FRAME_QUALITY = 0.8; // JPEG quality of a frame: the reader's quick look needs no more
const PHOTO_QUALITY = 0.92;
const SHARPEST_OF = 3; // without a still photo: the sharpest of this many video frames
const REPEATED_FRAME = 0.05; // a mean grey change per pixel under which the camera repeated its frame
const BLANK_SPREAD = 2; // a picture whose grey copy spans no more levels than this shows nothing (black)
const BLANK_RETRY_MS = 20; // ... and the camera's first real picture is looked for this soon again,
const BLANK_RETRIES = 25; // this many times running (half a second), then at the usual rate

export class LiveView {
  // `box`: the element the view is drawn in. `options`: info (/api/info), gameId, onPhoto(file)
  // (the photo taken, to be read as this roll's), onKept(answer) (a held photo kept: an upload's
  // answer), onError(message), turnLabel() (whose turn).
  constructor(box, options) {
    this.box = box;
    this.options = options;
    this.stream = null;
    this.capture = null; // ImageCapture, where the browser has it
    this.timer = null;
    this.inFlight = false;
    this.history = []; // the last frames read, in the order seen: {seq, reading, motion (the most since the frame before), hand (one in view), held (its token)}
    this.seq = 0;
    this.wantHeld = true; // the next settled frame goes as a photo, held (the view changed since the last)
    this.holding = false; // a held photo is being read
    this.stirred = false; // the view moved since the held photo being read was taken
    this.heldToken = null; // the latest held photo's token
    this.confirmSent = false; // a frame went after the held photo being read
    this.previousThumb = null;
    this.blanks = 0; // black pictures running
    this.motionSinceSent = Infinity;
    this.changed = true; // the view changed since the last frame read: it may be settling
    this.lastSent = 0;
    this.waiting = null; // a settling frame seen while another was being read
    this.armed = true; // a photo may be taken; after one, only once the dice moved again
    this.taking = false;
    this.frames = 0; // frames read since the view opened (tests and the benchmark watch it)
    this.onVisibility = () => this.schedule();
  }

  async start() {
    if (this.stream || this.opening) return; // open already, or opening
    if (!cameraUsable()) {
      this.options.onError(cameraMessage(null));
      return;
    }
    this.opening = true;
    try {
      this.stream = await navigator.mediaDevices.getUserMedia({
        video: { facingMode: "environment", width: { ideal: 1920 }, height: { ideal: 1080 } }, audio: false,
      });
    } catch (err) {
      this.options.onError(cameraMessage(err));
      return;
    } finally {
      this.opening = false;
    }
    this.box.innerHTML = liveHtml(this.options.info);
    this.video = this.box.querySelector("#camera-video");
    this.video.srcObject = this.stream;
    const track = this.stream.getVideoTracks()[0];
    this.capture = typeof ImageCapture === "function" && track ? new ImageCapture(track) : null;
    this.box.querySelector("#live-view").addEventListener("click", () => this.takePhoto("tap"));
    this.box.querySelector("#camera-snap").addEventListener("click", () => this.takePhoto("tap"));
    this.box.querySelector("#camera-close").addEventListener("click", () => this.stop());
    this.box.querySelector("#live-expect").addEventListener("change", () => { this.changed = true; });
    this.box.hidden = false;
    this.box.dataset.frames = "0";
    this.box.dataset.captures = "0";
    this.wantHeld = true; // the first look goes as the photo
    this.blanks = 0;
    document.addEventListener("visibilitychange", this.onVisibility);
    this.say("Point the camera at the dice.");
    this.schedule(0);
  }

  stop() {
    clearTimeout(this.timer);
    this.timer = null;
    document.removeEventListener("visibilitychange", this.onVisibility);
    if (this.stream) this.stream.getTracks().forEach((t) => t.stop());
    this.stream = null;
    this.capture = null;
    this.box.hidden = true;
    this.box.innerHTML = "";
  }

  // The camera is looked at max_fps times a second (motion, measured here on a small grey copy);
  // a frame goes to the server then only while the dice may be settling (the view changed and is
  // still now), else at idle_fps, to keep the overlay and the line current. One at a time, and
  // none while the page is hidden.
  schedule(delay = 1000 / this.options.info.live_max_fps) {
    clearTimeout(this.timer);
    this.timer = null;
    if (!this.stream || document.hidden) return;
    this.timer = setTimeout(() => this.tick(), delay);
  }

  tick() {
    const video = this.video;
    if (!video.videoWidth || this.taking) {
      this.schedule(100);
      return;
    }
    const { canvas, thumb } = grabFrame(video, this.options.info.live_frame_long_side);
    // A black picture: the video's before the camera's first frame is drawn, or a camera starting.
    // Looked at, it would go as the photo, and the dice appearing would read as motion.
    if (blank(thumb)) {
      this.blanks += 1;
      this.schedule(this.blanks <= BLANK_RETRIES ? BLANK_RETRY_MS : undefined);
      return;
    }
    this.blanks = 0;
    const motion = this.previousThumb ? meanChange(this.previousThumb, thumb) : Infinity;
    this.previousThumb = thumb;
    // The camera gave its frame again (a stalled camera; a real sensor's noise makes every new
    // frame differ): it says nothing new.
    if (motion <= REPEATED_FRAME) {
      this.schedule();
      return;
    }
    this.motionSinceSent = Math.max(this.motionSinceSent, motion);
    if (motion > STILL_LEVEL) {
      this.changed = true;
      this.wantHeld = true;
      this.stirred = true;
    }
    if (!this.armed && moved(motion)) this.armed = true;
    const settling = this.armed && this.changed && motion <= STILL_LEVEL;
    // The first look, or the view settled: this frame goes as the photo, read in full while the
    // next frames tell whether the dice lie still.
    if (this.armed && this.wantHeld && !this.holding && (settling || !Number.isFinite(motion))) {
      this.wantHeld = false;
      this.hold(this.motionSinceSent);
      this.schedule();
      return;
    }
    const due = performance.now() - this.lastSent >= 1000 / this.options.info.live_idle_fps;
    // While a held photo is read, one frame after it tells whether the dice lay still: no more.
    const open = !this.holding || !this.confirmSent;
    // A settling frame seen while one is on its way goes as soon as that one is read.
    this.waiting = settling && this.inFlight && open ? canvas : null;
    if (!this.inFlight && open && (settling || due)) this.send(canvas, this.motionSinceSent);
    this.schedule();
  }

  async send(canvas, motion) {
    this.inFlight = true;
    if (this.holding) this.confirmSent = true;
    this.lastSent = performance.now();
    this.motionSinceSent = 0;
    const seq = ++this.seq;
    try {
      const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", FRAME_QUALITY));
      const { reading, hand } = await postFrame(this.options.gameId, blob, "frames");
      this.seen({ seq, reading, motion, hand });
    } catch (err) {
      if (this.stream) this.say(err.message);
    } finally {
      this.inFlight = false;
    }
    const next = this.waiting;
    this.waiting = null;
    if (next && this.changed && this.stream && !this.taking && !document.hidden && (!this.holding || !this.confirmSent)) {
      this.send(next, this.motionSinceSent);
    }
  }

  // A photo at the size the reader reads photos, read in full and held by the server: the video
  // frame now, to be kept if the next frame reads the same; or (`best`: two frames read the same
  // already) the camera's best picture, kept once read unless the view moved meanwhile or the
  // photo shows what stops one (a hand, a die cut or missing).
  async hold(motion, best = false) {
    this.holding = true;
    this.stirred = false;
    this.confirmSent = false;
    this.lastSent = performance.now();
    this.motionSinceSent = 0;
    const seq = ++this.seq;
    try {
      this.heldPicture = "video frame";
      const blob = best ? await this.bestPicture() : await videoPicture(this.video, this.options.info.photo_long_side);
      const { reading, hand, held } = await postFrame(this.options.gameId, blob, "held-photos");
      this.heldToken = held;
      const entry = { seq, reading, motion, hand, held };
      if (best && !this.stirred && !frameAdvice(entry, this.expected()) && !this.taking && this.stream) {
        await this.keepHeld(held);
      } else {
        this.seen(entry);
      }
    } catch (err) {
      if (this.stream) this.say(err.message);
    } finally {
      this.holding = false;
    }
  }

  // A frame (or held photo) read: drawn, and in the history in the order seen.
  seen(entry) {
    if (!this.stream || this.taking) return;
    this.frames += 1;
    this.box.dataset.frames = String(this.frames);
    this.history = [...this.history, entry].sort((a, b) => a.seq - b.seq).slice(-4);
    if (entry.seq === this.history[this.history.length - 1].seq) this.draw(entry.reading);
    this.decide();
  }

  expected() {
    return Number(this.box.querySelector("#live-expect").value);
  }

  decide() {
    const advice = steadyAdvice(this.history, this.expected());
    this.box.dataset.state = advice.state;
    // Until the view changes again, another frame would be read the same: idle rate.
    if (advice.state !== "moving") this.changed = false;
    if (advice.state === "steady" && this.armed) {
      // The held photo, if it is one of the two frames that read the same: already read in full.
      const held = this.history.slice(-2).find((entry) => entry.held && entry.held === this.heldToken);
      if (held) {
        this.say("Got it.");
        this.keepHeld(held.held);
      } else if (this.holding) {
        this.say(advice.message); // the photo being read decides
      } else {
        this.say("Got it: taking the photo…");
        this.hold(this.motionSinceSent, true);
      }
      return;
    }
    this.say(advice.state === "steady" ? "Read. Roll again, or tap to take it again." : advice.message);
  }

  // Keep the held photo as this roll's: the server has read it; else take a photo now.
  async keepHeld(token) {
    if (this.taking || !this.stream) return;
    this.taking = true;
    this.armed = false;
    this.heldToken = null;
    let answer = null;
    try {
      answer = await keepPhoto(this.options.gameId, token);
    } catch (err) {
      answer = null; // let go meanwhile (another photo replaced it): a photo is taken instead
    }
    if (!answer) {
      this.taking = false;
      this.takePhoto("steady");
      return;
    }
    this.box.dataset.captures = String(Number(this.box.dataset.captures) + 1);
    this.box.dataset.lastCapture = "steady";
    this.box.dataset.source = "held photo";
    this.box.dataset.picture = this.heldPicture;
    try {
      this.options.onKept(answer);
    } finally {
      this.afterPhoto();
    }
  }

  // The best picture the camera gives, at the size the reader reads photos: a still photo where
  // the browser takes one larger than the video, else the video frame (the camera's full size,
  // as opened: up to photo_long_side).
  async bestPicture() {
    const still = await this.stillPhoto();
    const picture = still && await preparePhoto(still, this.options.info.photo_long_side);
    this.heldPicture = picture ? "still photo" : "video frame";
    return picture || videoPicture(this.video, this.options.info.photo_long_side);
  }

  // A still photo from the camera (ImageCapture.takePhoto) where it has more than the video; else null.
  async stillPhoto() {
    if (!(await this.stillHasMore())) return null;
    try {
      const blob = await this.capture.takePhoto();
      return blob && blob.size ? new File([blob], "live.jpg", { type: blob.type || "image/jpeg" }) : null;
    } catch (err) {
      return null; // no still photo from this camera (some give none): its video frame instead
    }
  }

  // The sharpest picture the camera gives at a tap: a still photo where the browser takes one,
  // else the sharpest of a few video frames at the camera's full size. Read as this roll's photo.
  async takePhoto(why) {
    if (this.taking || !this.stream) return;
    this.taking = true;
    this.armed = false;
    try {
      const file = await this.sharpestPicture();
      this.box.dataset.captures = String(Number(this.box.dataset.captures) + 1);
      this.box.dataset.lastCapture = why;
      this.box.dataset.picture = this.box.dataset.source;
      await this.options.onPhoto(file);
    } catch (err) {
      this.options.onError(`The camera could not take the photo (${err.message}). Try again, or use “Take photo”.`);
    } finally {
      this.afterPhoto();
    }
  }

  afterPhoto() {
    this.taking = false;
    this.history = [];
    this.previousThumb = null;
    this.motionSinceSent = Infinity;
  }

  async sharpestPicture() {
    const still = await this.stillPhoto();
    if (still) {
      this.box.dataset.source = "still photo";
      return still;
    }
    let best = null;
    for (let i = 0; i < SHARPEST_OF; i++) {
      if (i) await new Promise((resolve) => setTimeout(resolve, 40));
      const { canvas } = grabFrame(this.video, 0);
      const score = sharpness(canvas);
      if (!best || score > best.score) best = { canvas, score };
    }
    const blob = await new Promise((resolve) => best.canvas.toBlob(resolve, "image/jpeg", PHOTO_QUALITY));
    this.box.dataset.source = "video frame";
    return new File([blob], "live.jpg", { type: "image/jpeg" });
  }

  // A still photo is slower to take than a video frame: worth it only when the video is smaller
  // than the photos the reader reads (photo_long_side) and the still photo larger than the video.
  async stillHasMore() {
    if (!this.capture) return false;
    const long = Math.max(this.video.videoWidth, this.video.videoHeight);
    if (long >= this.options.info.photo_long_side) return false;
    try {
      const capabilities = await this.capture.getPhotoCapabilities();
      return !!capabilities.imageWidth && Math.max(capabilities.imageWidth.max, capabilities.imageHeight.max) > long;
    } catch (err) {
      return false;
    }
  }

  draw(reading) {
    const svg = this.box.querySelector("#live-overlay");
    svg.setAttribute("viewBox", `0 0 ${reading.width} ${reading.height}`);
    const stroke = Math.max(1.5, reading.width / 300);
    const size = Math.max(12, reading.width / 28);
    svg.innerHTML = reading.dice.map((die) => {
      const [x0, y0, x1, y1] = die.box;
      const label = die.token.replace(/([rogb])$/, "");
      return `<g class="live-die${die.uncertain ? " uncertain" : ""}" aria-label="${esc(describe(die.token))}">
        <rect x="${x0}" y="${y0}" width="${x1 - x0}" height="${y1 - y0}" stroke-width="${stroke}"></rect>
        <text x="${(x0 + x1) / 2}" y="${y0 - stroke * 2}" font-size="${size}" text-anchor="middle">${esc(label)}${die.uncertain ? "?" : ""}</text></g>`;
    }).join("");
  }

  say(message) {
    const status = this.box.querySelector("#live-status");
    if (status) status.textContent = `${this.options.turnLabel()}: ${message}`;
  }
}

// A frame scaled to `longSide` (0: the video's own size), and a small grey copy for motion.
function grabFrame(video, longSide) {
  const w = video.videoWidth;
  const h = video.videoHeight;
  const k = longSide ? Math.min(1, longSide / Math.max(w, h)) : 1;
  const canvas = document.createElement("canvas");
  canvas.width = Math.round(w * k);
  canvas.height = Math.round(h * k);
  canvas.getContext("2d").drawImage(video, 0, 0, canvas.width, canvas.height);
  const thumb = document.createElement("canvas");
  thumb.width = 64;
  thumb.height = Math.max(1, Math.round(64 * h / w));
  const tc = thumb.getContext("2d", { willReadFrequently: true });
  tc.drawImage(canvas, 0, 0, thumb.width, thumb.height);
  return { canvas, thumb: grey(tc.getImageData(0, 0, thumb.width, thumb.height).data) };
}

// The video frame now as a JPEG, scaled to `longSide` (no larger than the video's own size).
async function videoPicture(video, longSide) {
  const { canvas } = grabFrame(video, longSide || 0);
  return new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", PHOTO_QUALITY));
}

// The picture shows nothing: its grey copy is one level throughout (a black frame).
function blank(thumb) {
  let low = Infinity;
  let high = -Infinity;
  for (const v of thumb) {
    low = Math.min(low, v);
    high = Math.max(high, v);
  }
  return high - low <= BLANK_SPREAD;
}

function grey(rgba) {
  const out = new Float32Array(rgba.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = 0.299 * rgba[4 * i] + 0.587 * rgba[4 * i + 1] + 0.114 * rgba[4 * i + 2];
  return out;
}

// The mean grey change per pixel (0-255) between two thumbnails of the view.
function meanChange(a, b) {
  if (a.length !== b.length) return Infinity;
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i] - b[i]);
  return sum / a.length;
}

// How sharp a picture is: the mean absolute difference between neighbouring pixels of its grey
// copy at 320 px (blur evens them out).
function sharpness(canvas) {
  const k = Math.min(1, 320 / Math.max(canvas.width, canvas.height));
  const small = document.createElement("canvas");
  small.width = Math.max(2, Math.round(canvas.width * k));
  small.height = Math.max(2, Math.round(canvas.height * k));
  const context = small.getContext("2d", { willReadFrequently: true });
  context.drawImage(canvas, 0, 0, small.width, small.height);
  const g = grey(context.getImageData(0, 0, small.width, small.height).data);
  let sum = 0;
  for (let y = 0; y < small.height; y++) {
    for (let x = 1; x < small.width; x++) sum += Math.abs(g[y * small.width + x] - g[y * small.width + x - 1]);
  }
  return sum / (small.width * small.height);
}

// A frame read (`where`: "frames"), or a photo read and held ("held-photos").
async function postFrame(gameId, blob, where) {
  const data = new FormData();
  data.append("photo", blob, "frame.jpg");
  const response = await fetch(`/api/games/${encodeURIComponent(gameId)}/${where}`, { method: "POST", body: data });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new Error(body && body.error ? body.error : `The server answered ${response.status}.`);
  return { reading: body.reading, hand: !!body.hand, held: body.held || null };
}

// The held photo kept as the game's (an upload's answer), or null when it is no longer held.
async function keepPhoto(gameId, token) {
  const url = `/api/games/${encodeURIComponent(gameId)}/held-photos/${encodeURIComponent(token)}`;
  const response = await fetch(url, { method: "POST" });
  if (response.status === 404) return null;
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new Error(body && body.error ? body.error : `The server answered ${response.status}.`);
  return body;
}

function liveHtml(info) {
  const options = Array.from({ length: info.dice_count }, (_, i) => info.dice_count - i)
    .map((n) => `<option value="${n}">${n === info.dice_count ? `all ${n}` : n}</option>`).join("");
  return `
    <div class="live-view" id="live-view" role="button" aria-label="Live view: tap to take the photo now">
      <video id="camera-video" autoplay playsinline muted></video>
      <svg id="live-overlay" preserveAspectRatio="xMidYMid meet" aria-label="Dice the reader sees"></svg>
    </div>
    <p class="live-status" id="live-status" role="status" aria-live="polite"></p>
    <div class="row live-actions">
      <label class="live-expect">Dice in view <select id="live-expect">${options}</select></label>
      <button type="button" class="btn primary" id="camera-snap">Take it now</button>
      <button type="button" class="btn" id="camera-close">Close camera</button>
    </div>`;
}
