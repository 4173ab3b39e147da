"""The turn on a phone: what a photo costs to send, how long until Confirm is ready, and
whether the reader reads the photo the page sends as well as the original.

    .venv/bin/python benchmarks/bench_turn.py [--photos 5]
    .venv/bin/python benchmarks/bench_turn.py --far data/far --out /tmp/far_sent [--limit 200]

Real Chromium (/usr/bin/chromium, headless) at 390x844 with DevTools network emulation of a
20 Mbit/s, 40 ms link, against the scorepad served by the real server on 127.0.0.1 with the shipped
models. The photos are 12 MP JPEGs (4032x3024) made from the 12 MP sample photos with
sensor-like grain added (3-5 MB each, as a phone's). For each: the bytes the server received
for the photo and the time from choosing it to Confirm ready (the reading drawn, the verdict
in, the bar's main action ready for a tap: Confirm, or the first check the bar asks for when
the reader doubts a die that could change the result), as the page sends it today
(downscaled in the browser) and as the original file; medians. The first photo after the
server starts is timed apart (on a fresh server, as the first turn of an evening). Timings
include the reading on this machine's CPU.

--far: each photo of a labelled set is downscaled by the page's own code (web/static/js/
photo.js, in Chromium), written with its labels scaled to --out, and the reading pipeline is
evaluated on both sets (training.evaluate's figures). Prints figures; never fails.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import statistics
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
from PIL import Image

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # tests/ and training/ are not installed: imported from the checkout
from tests.browser_helpers import PHONE, launch_chromium  # noqa: E402 - Chromium as the browser tests run it

LINK = {"offline": False, "latency": 40, "downloadThroughput": 20e6 / 8, "uploadThroughput": 20e6 / 8}
SOURCES = ["s00_white_10.jpg", "s01_black_10.jpg", "s03_busy_exif.jpg", "s12_far_phone.jpg"]
GRAIN_SIGMA = 5.0  # per-pixel noise, in 8-bit levels: a phone sensor's grain at indoor light
JPEG_QUALITY = 93  # about a phone camera's own setting

# Resolves with the milliseconds from the photo's choice to Confirm ready, watching the DOM.
WATCH = """() => new Promise((resolve) => {
  const input = document.querySelector('#photo-input');
  let t0 = null;
  input.addEventListener('change', () => { t0 = performance.now(); }, { capture: true, once: true });
  const tappable = (b) => b && !b.hidden && !b.disabled && !b.hasAttribute('aria-disabled');
  const ready = () => {
    const v = document.querySelector('#verdict');
    const action = tappable(document.querySelector('#confirm')) || tappable(document.querySelector('#ask-yes'));
    return t0 !== null && action && v && /complete/.test(v.textContent) && document.querySelector('#busy').hidden;
  };
  const observer = new MutationObserver(() => {
    if (ready()) { observer.disconnect(); resolve(performance.now() - t0); }
  });
  observer.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
})"""

# The page's own downscaling of the file in a (hidden) input, as base64 JPEG (or null: kept).
PREPARE = """async ([longSide]) => {
  const { preparePhoto } = await import('/static/js/photo.js');
  const file = document.querySelector('#bench-input').files[0];
  const sent = await preparePhoto(file, longSide);
  if (sent === file) return null;
  const bytes = new Uint8Array(await sent.arrayBuffer());
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}"""


class Server:
    """The scorepad on a free port in a background thread (as the browser tests run it)."""

    def __init__(self, db: Path):
        from companion.server import create_app, make_server

        # Each page's live stream holds a worker thread until a keep-alive finds it closed:
        # plenty of threads and a short keep-alive, so no turn waits behind a closed page's stream.
        self.app = create_app(db, keepalive_s=1.0)
        self.server = make_server(self.app, "127.0.0.1", 0, threads=32)
        self.url = f"http://127.0.0.1:{self.server.effective_port}"
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        from companion.server import shutdown

        shutdown(self.app, self.server, self.thread)


def grainy_photos(folder: Path, count: int) -> list[Path]:
    """12 MP JPEGs with sensor-like grain, from the 12 MP sample photos (EXIF orientation kept)."""
    out = []
    rng = np.random.default_rng(21)
    for i in range(count):
        source = REPO / "sample_images" / SOURCES[i % len(SOURCES)]
        with Image.open(source) as image:
            exif = image.getexif()
            rgb = np.asarray(image.convert("RGB"), dtype=np.float32)
        noisy = rgb + rng.normal(0, GRAIN_SIGMA, rgb.shape[:2] + (1,)) + rng.normal(0, GRAIN_SIGMA / 2, rgb.shape)
        path = folder / f"phone_{i}.jpg"
        Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8)).save(path, quality=JPEG_QUALITY, exif=exif)
        out.append(path)
    return out


def one_turn(browser, server: Server, photo: Path, downscale: bool) -> tuple[float, int, float]:
    """(ms from choosing the photo to Confirm ready, bytes the server stored for the photo,
    ms the server's reading took)."""
    context = browser.new_context(viewport=PHONE, base_url=server.url)
    page = context.new_page()
    if not downscale:  # the page as it was: no size to downscale to, so the file goes whole
        page.route("**/api/info", lambda route: route.fulfill(
            json={k: v for k, v in route.fetch().json().items() if k != "photo_long_side"}))
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", LINK)
    page.goto("/")
    page.fill("#players li:nth-child(1) input", "Ann")
    page.fill("#players li:nth-child(2) input", "Bob")
    page.click("#start-game")
    page.wait_for_selector("#current-player")
    page.check("input[name=roll][value='3']")  # the final roll: Confirm is the main action
    page.evaluate("() => { window.benchReady = (%s)(); }" % WATCH)
    page.set_input_files("#photo-input", str(photo))
    ms = page.evaluate("() => window.benchReady", )
    url = page.locator("#photo-img").get_attribute("src")
    size = page.evaluate("(url) => fetch(url).then((r) => r.arrayBuffer()).then((b) => b.byteLength)", url)
    read_ms = float(page.locator("#photo-note").text_content().rsplit("·", 1)[1].split()[0])
    context.close()
    return ms, size, read_ms


def bench_turns(count: int) -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        photos = grainy_photos(Path(tmp), count)
        sizes = [p.stat().st_size for p in photos]
        print(f"{count} photos, 4032x3024 with grain, {min(sizes) / 1e6:.1f}-{max(sizes) / 1e6:.1f} MB; "
              f"link 20 Mbit/s, 40 ms; Chromium at 390x844")
        browser = launch_chromium(playwright)
        with Server(Path(tmp) / "bench.sqlite3") as server:
            first = one_turn(browser, server, photos[0], True)  # the first photo after the server starts
            print(f"first photo after the server starts: photo chosen -> Confirm ready {first[0]:.0f} ms, "
                  f"of which the server's reading {first[2]:.0f} ms")
            for downscale in (True, False):
                runs = [one_turn(browser, server, p, downscale) for p in photos]
                ms = [r[0] for r in runs]
                sent = [r[1] for r in runs]
                read = [r[2] for r in runs]
                label = "downscaled in the browser" if downscale else "original file (before)"
                print(f"{label:<27} sent median {statistics.median(sent) / 1e6:.2f} MB (max {max(sent) / 1e6:.2f}); "
                      f"photo chosen -> Confirm ready median {statistics.median(ms):.0f} ms (max {max(ms):.0f}), "
                      f"of which the server's reading median {statistics.median(read):.0f} ms")
        browser.close()


def write_sent_set(far: Path, out: Path, limit: int) -> None:
    """`out` as a dataset: each photo of `far` as the page sends it, labels scaled to match."""
    from playwright.sync_api import sync_playwright

    lines = [json.loads(line) for line in (far / "labels.jsonl").read_text().splitlines() if line.strip()]
    if limit:
        lines = lines[:limit]
    (out / "images").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        with Server(Path(tmp) / "bench.sqlite3") as server:
            page = browser.new_page(base_url=server.url)
            page.goto("/")
            long_side = page.evaluate("() => fetch('/api/info').then((r) => r.json()).then((i) => i.photo_long_side)")
            page.evaluate("() => { const i = document.createElement('input'); i.type = 'file'; i.id = 'bench-input'; i.hidden = true; document.body.append(i); }")
            written = []
            for label in lines:
                page.set_input_files("#bench-input", str(far / label["image"]))
                data = page.evaluate(PREPARE, [long_side])
                name = Path(label["image"]).with_suffix(".jpg").name
                blob = base64.b64decode(data) if data else (far / label["image"]).read_bytes()
                (out / "images" / name).write_bytes(blob)
                with Image.open(io.BytesIO(blob)) as image:
                    width, height = image.size
                written.append(scaled(label, f"images/{name}", width, height))
        browser.close()
    (out / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in written))
    print(f"{len(written)} photos of {far} as the page sends them (long side {long_side}) -> {out}")


def scaled(label: dict, image: str, width: int, height: int) -> dict:
    kx, ky = width / label["width"], height / label["height"]
    dice = [{**d, "polygon": [[x * kx, y * ky] for x, y in d["polygon"]],
             "box": [d["box"][0] * kx, d["box"][1] * ky, d["box"][2] * kx, d["box"][3] * ky]} for d in label["dice"]]
    return {**label, "image": image, "width": width, "height": height, "dice": dice}


def compare_readings(far: Path, out: Path, limit: int) -> None:
    from companion.vision.models import load_models
    from training.common import read_dataset
    from training.evaluate import evaluate_image, summarise

    models = load_models(None)
    for name, folder in (("original files", far), ("as the page sends", out)):
        images = read_dataset(str(folder))[: limit or None]
        s = summarise([evaluate_image(im, models) for im in images])
        print(f"{name:<18} {s['photos']} photos {s['dice']} dice: found {s['recall']:.4f}, face right {s['face_acc']:.4f}, "
              f"dice right {s['dice_right']:.4f}, photos all right {s['photos_all_right']:.4f}, "
              f"flagged {s['flagged']:.3f}, nothing wrong unflagged {s['photos_nothing_silently_wrong']:.4f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--photos", type=int, default=5, help="12 MP photos to time (default 5)")
    parser.add_argument("--far", type=Path, help="a labelled photo set to compare the reading on")
    parser.add_argument("--out", type=Path, help="with --far: where to write the photos as sent")
    parser.add_argument("--limit", type=int, default=0, help="with --far: only the first N photos")
    args = parser.parse_args(argv)
    if args.far:
        out = args.out or Path(tempfile.mkdtemp(prefix="far_sent_"))
        if not (out / "labels.jsonl").exists():
            write_sent_set(args.far, out, args.limit)
        compare_readings(args.far, out, args.limit)
    else:
        bench_turns(args.photos)
    return 0


if __name__ == "__main__":
    sys.exit(main())
