"""The live view: how soon still dice become chips, what one phone's view costs the server, and
whether anything is taken while the dice roll, a hand passes or a die is cut by the edge.

    .venv/bin/python benchmarks/bench_live.py [--runs 5] [--cpu-seconds 20] [--seeds 3] [--watch-seconds 10]

`companion serve --lan --host 127.0.0.1` (HTTPS, its own certificate, the shipped models) in a
process of its own; real Chromium (/usr/bin/chromium, headless) at 390x844 joined by the join
link, with DevTools network emulation of a 20 Mbit/s, 40 ms link, and a camera that plays a
sequence of tests/live_sequences.py (960x720, 5 frames a second, looped).

- still -> chips: from the camera's first picture of the still dice to the chips of the photo
  the page took by itself drawn (no tap); median and worst of --runs, and the photos each run
  sent to be held (one, where the first look is kept).
- server CPU: the server process's CPU time (/proc) over --cpu-seconds of one phone's live view,
  as a share of one core: on the rolling sequence (nothing taken), and on the still one (taken
  once, then watched).
- false captures: photos taken over --watch-seconds of each of the rolling, hand, still_hand and
  cut sequences, for --seeds seeds each (the camera looks 4 times a second throughout).

The load average (`uptime`) is printed at the start and the end: the figures depend on it.

Timings include the reading on this machine's CPU. Prints figures; never fails.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # tests/ is not installed: imported from the checkout
from tests.browser_helpers import PHONE, launch_with_camera  # noqa: E402 - Chromium as the browser tests run it
from tests.live_sequences import SAMPLE, SIZE, sequence, write_y4m  # noqa: E402

LINK = {"offline": False, "latency": 40, "downloadThroughput": 20e6 / 8, "uploadThroughput": 20e6 / 8}
TIMEOUT_MS = 60_000


class Server:
    """`companion serve --lan` on 127.0.0.1 in its own process: its link and its CPU time."""

    def __init__(self, folder: Path):
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "companion", "serve", "--lan", "--host", "127.0.0.1", "--port", str(port),
             "--db", str(folder / "bench.sqlite3")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.url = None
        for line in self.process.stdout:
            found = re.search(r"(https://\S+)", line)
            self.url = self.url or (found.group(1) if found else None)
            if "Ctrl+C" in line:
                break
        assert self.url, "companion serve printed no link"
        self.base = self.url.split("/?")[0]
        self.quiet()

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def quiet(self) -> None:
        """Wait until the server is idle (the advisor's tables are built at start)."""
        last = self.cpu_seconds()
        while True:
            time.sleep(1.0)
            now = self.cpu_seconds()
            if now - last < 0.05:
                return
            last = now

    def stop(self) -> None:
        self.process.send_signal(2)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()


def open_view(playwright, server: Server, video: Path):
    """A joined phone page on a new game with the live view opened; returns (browser, page, opened_at)."""
    browser = launch_with_camera(playwright, video)
    context = browser.new_context(viewport=PHONE, base_url=server.base, ignore_https_errors=True)
    page = context.new_page()
    # Each request's path, start and end (ms), to tell where the time goes; and when the camera's
    # first picture reached the page (a video's loadeddata, caught as it happens).
    page.add_init_script("""(() => {
        document.addEventListener('loadeddata', () => { window.firstPicture ??= performance.now(); }, true);
        const plain = window.fetch.bind(window);
        window.requestTimes = [];
        window.fetch = async (url, init) => {
            const entry = { path: String(url).replace(/\\/api\\/games\\/[^/]+/, ''), start: performance.now() };
            try {
                const response = await plain(url, init);
                if (/\\/photos$|\\/held-photos\\/[^/]+$/.test(entry.path)) window.photoAnswer = await response.clone().json();
                return response;
            } finally { entry.end = performance.now(); window.requestTimes.push(entry); }
        };
    })()""")
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", LINK)
    page.goto(server.url)
    page.fill("#players li:nth-child(1) input", "Ann")
    page.fill("#players li:nth-child(2) input", "Bob")
    page.click("#start-game")
    page.wait_for_selector("#current-player")
    page.click("#camera-open")
    page.wait_for_selector("#camera-video", state="attached")
    # The camera's first picture: from then on the dice it shows are still.
    first = page.wait_for_function("() => window.firstPicture ?? null", timeout=TIMEOUT_MS).json_value()
    return browser, page, first


def frames_read(page) -> int:
    return int(page.locator("#camera").get_attribute("data-frames") or 0)


def still_to_chips(playwright, server: Server, video: Path) -> tuple[float, int, dict, int]:
    browser, page, first = open_view(playwright, server, video)
    try:
        shown = page.wait_for_function(
            "() => document.querySelectorAll('#dice .chip').length > 0 && !document.querySelector('#photo').hidden"
            " && document.querySelector('#busy').hidden ? performance.now() : null", timeout=TIMEOUT_MS).json_value()
        steps = page.evaluate("window.requestTimes")
        path = " ".join(f"{e['path'] or 'game'} {e['start'] - first:.0f}-{e['end'] - first:.0f}"
                        for e in steps if e["end"] >= first)
        source = page.locator("#camera").get_attribute("data-source")
        print(f"    requests (ms from the first picture): {path}; the photo: a {source}", flush=True)
        held = sum(e["path"] == "/held-photos" for e in steps)
        return (shown - first) / 1000, frames_read(page), page.evaluate("window.photoAnswer.reading"), held
    finally:
        browser.close()


def watch(playwright, server: Server, video: Path, seconds: float) -> tuple[int, int, float]:
    """Over `seconds` of a live view (from its first frame read): photos taken, frames read, and the
    server's CPU time as a share of one core."""
    browser, page, _ = open_view(playwright, server, video)
    try:
        page.wait_for_function("() => Number(document.querySelector('#camera').dataset.frames) >= 1", timeout=TIMEOUT_MS)
        cpu0, t0, n0 = server.cpu_seconds(), time.monotonic(), frames_read(page)
        page.wait_for_timeout(seconds * 1000)
        cpu, wall = server.cpu_seconds() - cpu0, time.monotonic() - t0
        return int(page.locator("#camera").get_attribute("data-captures") or 0), frames_read(page) - n0, cpu / wall
    finally:
        browser.close()


def dice_right(reading: dict) -> int:
    """The sample's labelled dice read right: a read die centred in the die's box, with its value and colour."""
    label = next(json.loads(line) for line in (REPO / "sample_images" / "labels.jsonl").read_text().splitlines()
                 if json.loads(line)["image"] == SAMPLE)
    k = reading["width"] / label["width"]
    right = 0
    for die in label["dice"]:
        x0, y0, x1, y1 = (v * k for v in die["box"])
        token = f"{die['value']}{die['color'][0]}"
        right += any(x0 <= (r["box"][0] + r["box"][2]) / 2 <= x1 and y0 <= (r["box"][1] + r["box"][3]) / 2 <= y1
                     and r["token"] == token for r in reading["dice"])
    return right


def photographed() -> dict:
    """The sample photo itself, read by the reader as a photo upload is."""
    from companion.vision import ReadSettings, read_image
    from companion.web_api.games import reading_json

    data = (REPO / "sample_images" / SAMPLE).read_bytes()
    return reading_json(read_image(data, settings=ReadSettings.from_env()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cpu-seconds", type=float, default=20.0)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--watch-seconds", type=float, default=10.0)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        folder = Path(tmp)
        server = Server(folder)
        print(f"load average at the start: {' '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
        try:
            still = write_y4m(folder / "still.y4m", sequence("still"))
            times, right, held = [], [], []
            for _ in range(args.runs):
                seconds, frames, reading, sent = still_to_chips(playwright, server, still)
                times.append(seconds)
                right.append(dice_right(reading))
                held.append(sent)
                print(f"  still -> chips {seconds:.2f} s ({frames} frames read, {sent} held photos sent), "
                      f"{right[-1]} dice right", flush=True)
            print(f"still dice -> chips shown: median {statistics.median(times):.2f} s, best {min(times):.2f} s, "
                  f"worst {max(times):.2f} s ({args.runs} runs, 20 Mbit/s / 40 ms link); held photos sent per run: "
                  f"{', '.join(map(str, held))}")
            print(f"the photo taken (from the {SIZE[0]}x{SIZE[1]} video): {min(right)}-{max(right)} of 10 dice right; "
                  f"the same scene photographed ({SAMPLE}, read in full): {dice_right(photographed())} of 10")

            for name, label in (("rolling", "dice rolling"), ("still", "still dice, once taken")):
                video = write_y4m(folder / f"cpu-{name}.y4m", sequence(name, seed=100))
                _, frames, share = watch(playwright, server, video, args.cpu_seconds)
                print(f"server CPU, one phone's live view, {label}: {100 * share:.0f}% of one core "
                      f"({frames} frames read in {args.cpu_seconds:.0f} s)", flush=True)

            false, seconds, frames_total = 0, 0.0, 0
            for name in ("rolling", "hand", "still_hand", "cut"):
                for seed in range(args.seeds):
                    video = write_y4m(folder / f"{name}{seed}.y4m", sequence(name, seed=seed))
                    taken, frames, _ = watch(playwright, server, video, args.watch_seconds)
                    false += taken
                    seconds += args.watch_seconds
                    frames_total += frames
                    print(f"  {name} seed {seed}: {taken} taken, {frames} frames read in {args.watch_seconds:.0f} s",
                          flush=True)
            print(f"false captures: {false} in {seconds:.0f} s of rolling, hand, still-hand and cut sequences "
                  f"({args.seeds} seeds each, {frames_total} frames read)")
        finally:
            server.stop()
            print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
