"""Benchmark reading 12 MP phone-sized JPEGs: time per photo, cold start, peak memory.

    .venv/bin/python benchmarks/bench_read.py [--photos 8] [--repeat 5] [--source sample_images]

Makes 4000 x 3000 JPEGs (quality 92, like a phone's) by enlarging labelled photos (the
sample images, or any dataset folder given) and adding sensor-like grain so that the files
are as large as a phone's (3-5 MB), then reports

- warm: the median and 95th percentile of read_image() per photo in one process, end to end
  (file read, JPEG decode at reduced size, detector, reader, decoding), its CPU time (all
  threads: what a read costs whatever else the machine runs), and where the time goes, per
  stage (timed in a separate pass of the same photos);
- the same photos' bare JPEG decode at 1/4 scale (Pillow's draft, no model), timed in the
  same run, and the ratio of the warm median to it: a figure that holds on a slower machine;
- cold: the wall time from starting a fresh Python process to its first result;
- peak resident memory of the warm process and of the cold one.

With --compare-spinning it then reads the photos again with sessions whose idle threads spin
(onnxruntime's default) and with the shipped ones (they sleep), interleaved in one process in an
order shuffled per photo, and checks that both read every photo the same. With --compare-settings
(COMPANION_* variables, as the CLI reads them: "COMPANION_READER_SURE_ONE=1 COMPANION_MIRROR_BAND=all")
it reads them interleaved in the same way with the shipped settings and with those, and counts the
photos the two read differently: on a busy machine, a fairer comparison than two runs. With
--stages-only it prints the time per stage alone (decode, shrink, detector views, crops, reader,
cubes, inks, decoder): where a faster read must come from.

Targets: median <= 150 ms per 12 MP photo and at most 2.5 times the bare decode; cold start <= 2 s.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent

COLD = """
import sys, time, json, resource
t0 = time.perf_counter()
from companion.vision import read_image
r = read_image(sys.argv[1])
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({"dice": len(r.dice), "inner_ms": (time.perf_counter() - t0) * 1000, "maxrss_mb": hwm / 1024}))
"""


def make_photos(source: Path, count: int, out: Path) -> list[Path]:
    labels = source / "labels.jsonl"
    rows = [json.loads(line) for line in labels.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("dice")][:count] or rows[:count]
    paths = []
    for i, row in enumerate(rows):
        img = Image.open(source / row["image"]).convert("RGB")
        # 12 MP in the photo's own orientation
        size = (4000, 3000) if img.width >= img.height else (3000, 4000)
        big = np.asarray(img.resize(size, Image.Resampling.BICUBIC), dtype=np.int16)
        # sensor-like grain: an enlarged photo alone compresses far better than a real one,
        # and the JPEG's entropy decoding time grows with its size
        grain = np.random.default_rng(i).normal(0, 4, big.shape).astype(np.int16)
        path = out / f"photo{i:02d}.jpg"
        Image.fromarray(np.clip(big + grain, 0, 255).astype(np.uint8)).save(path, quality=92)
        paths.append(path)
    return paths


def _peak_rss_mb() -> float:
    """VmHWM: the peak resident memory of this process (ru_maxrss would include the parent's)."""
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM")) / 1024


def warm_times(paths: list[Path], repeat: int) -> dict:
    from companion.vision import read_image
    from companion.vision.models import load_models

    models = load_models()  # loaded once, as a server does
    read_image(paths[0], models)
    totals, cpu, bare, bare_cpu = [], [], [], []
    for _ in range(repeat):
        for p in paths:
            c0, t0 = time.process_time(), time.perf_counter()
            read_image(p, models)
            totals.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
            c0, t0 = time.process_time(), time.perf_counter()
            _bare_decode(p)
            bare.append((time.perf_counter() - t0) * 1000)
            bare_cpu.append((time.process_time() - c0) * 1000)
    return {
        "median_ms": statistics.median(totals),
        "p95_ms": float(np.percentile(totals, 95)),
        "cpu_median_ms": statistics.median(cpu),
        "bare_decode_median_ms": statistics.median(bare),
        "bare_decode_cpu_median_ms": statistics.median(bare_cpu),
        "n": len(totals),
        "peak_rss_mb": _peak_rss_mb(),
        "stages": stage_times(paths, repeat, models),
    }


# The stages of a read: each names the functions ("module:attribute.path") timed where the
# pipeline calls them. "of which" stages lie inside the top-level stage above them; "load +
# decode" and "rest" (scene checks, flags, Python) are measured around them.
STAGES = {
    "of which the JPEG decode (and upright turn)": ("companion.vision.image_io:_decode",),
    "of which the shrinks (to working size; a sharper copy)": ("companion.vision.image_io:_halved",
                                                                "companion.vision.image_io:_shrink"),
    "find faces (detector, mirror views)": ("companion.vision.pipeline:find_faces",),
    "of which the upright view": ("companion.vision.detector:DetectorModel.heatmap",),
    "of which the mirror views near peaks": ("companion.vision.detector:DetectorModel.views_near_peaks",),
    "of which the second search (sharper copy, its windows)": ("companion.vision.stage1_find_faces:_search_regions",),
    "of which the sharper copy": ("companion.vision.stage1_find_faces:load_detail",),
    "crops + reader (turns)": ("companion.vision.stage2_read:read_boxes", "companion.vision.stage3_one_per_cube:read_boxes"),
    "of which the crops": ("companion.vision.stage2_read:box_crop",),
    "of which the photo's light": ("companion.vision.stage2_read:photo_light",),
    "of which the reader": ("companion.vision.reader:ReaderModel.logits",),
    "cubes (one top face per cube)": ("companion.vision.stage3_one_per_cube:_cubes",),
    "inks (light cast, joint colours, the inks' doubt scores)": ("companion.vision.stage3_one_per_cube:light_reference",
                                                     "companion.vision.stage4_decide:measure_inks",
                                                     "companion.vision.stage4_decide:joint_colours",
                                                     "companion.vision.doubts:joint_colours"),
    "set decoder": ("companion.vision.stage4_decide:decode",),
}
# stages before the read proper: inside load_work_image
LOADING = ("of which the JPEG decode (and upright turn)", "of which the shrinks (to working size; a sharper copy)")


def _owner(target: str) -> tuple[object, str]:
    """The object holding a "module:attribute.path" target's function, and the function's name."""
    import importlib

    module, path = target.split(":")
    owner: object = importlib.import_module(module)
    *parents, name = path.split(".")
    for parent in parents:
        owner = getattr(owner, parent)
    return owner, name


def stage_times(paths: list[Path], repeat: int, models) -> dict[str, tuple[float, float]]:
    """Median wall and CPU time per stage of a read, ms: loading (file read, decode, upright,
    working size), the stages above, and the rest (scene checks, flags, Python)."""
    from companion.vision.image_io import load_work_image
    from companion.vision.pipeline import read_work_image

    spent: dict[str, np.ndarray] = {}

    def clocks() -> np.ndarray:
        return np.array([time.perf_counter(), time.process_time()]) * 1000

    def timed(name, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            t0 = clocks()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + clocks() - t0
        return wrapper

    patched = [(name, *_owner(target)) for name, targets in STAGES.items() for target in targets]
    saved = [owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr) for _, owner, attr in patched]
    names = ["load + decode", *LOADING, *(n for n in STAGES if n not in LOADING), "rest"]
    rows: dict[str, list[np.ndarray]] = {name: [] for name in names}
    none = np.zeros(2)
    try:
        for (name, owner, attr), fn in zip(patched, saved):
            setattr(owner, attr, timed(name, fn))
        for _ in range(repeat):
            for p in paths:
                spent.clear()
                t0 = clocks()
                work = load_work_image(p)
                t1 = clocks()
                read_work_image(work, models)
                t2 = clocks()
                rows["load + decode"].append(t1 - t0)
                for name in STAGES:
                    rows[name].append(spent.get(name, none))
                top = sum((spent.get(n, none) for n in STAGES if not n.startswith("of which")), none)
                rows["rest"].append(t2 - t1 - top)
    finally:
        for (_, owner, attr), fn in zip(patched, saved):
            setattr(owner, attr, fn)
    return {name: tuple(float(x) for x in np.median(np.array(v), axis=0)) for name, v in rows.items()}


def _bare_decode(path: Path) -> None:
    """Reading the file and decoding it at 1/4 scale with libjpeg's DCT scaling, nothing else."""
    with Image.open(path) as img:
        img.draft("RGB", (img.width // 4, img.height // 4))
        img.load()


def compare_spinning(paths: list[Path], repeat: int) -> dict[str, float]:
    """Median ms per read with the shipped sessions and with spinning ones, and of the bare decode,
    interleaved (order shuffled per photo: a pool that spins slows whatever runs next)."""
    import dataclasses

    import onnxruntime as ort

    from companion.vision import read_image
    from companion.vision.models import DETECTOR_FILE, READER_FILE, default_models_dir, load_models
    from companion.vision.reader import PART_FILE

    shipped = load_models()

    def spinning(name: str):
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.inter_op_num_threads = 1
        opts.intra_op_num_threads = shipped.detector.session.get_session_options().intra_op_num_threads
        return ort.InferenceSession(str(default_models_dir() / name), sess_options=opts,
                                    providers=["CPUExecutionProvider"])

    reader = shipped.reader  # read through its parts, or through its one file
    spun = (dataclasses.replace(reader, parts=tuple(spinning(PART_FILE.format(k)) for k in range(len(reader.parts))))
            if reader.parts else dataclasses.replace(reader, session=spinning(READER_FILE)))
    spin = dataclasses.replace(shipped, detector=dataclasses.replace(shipped.detector, session=spinning(DETECTOR_FILE)),
                               reader=spun)
    variants = {"sleeping threads (shipped)": shipped, "spinning threads": spin}
    medians, differ = _interleaved(paths, repeat, {name: functools.partial(read_image, models=models)
                                                   for name, models in variants.items()})
    if differ:
        raise SystemExit(f"{differ} photos: the two sessions read them differently")
    return medians


def _interleaved(paths: list[Path], repeat: int, read: dict) -> tuple[dict[str, float], int]:
    """Median ms per read of each reading function and of the bare decode, interleaved in an order
    shuffled per photo (whatever runs first warms the caches for the next), and the number of
    photos they read differently. Each name's CPU time (all threads) is under "NAME, CPU": on a
    busy machine the wall time is mostly waiting for a core, and the CPU time what a read costs."""
    for fn in read.values():
        fn(paths[0])
    times: dict[str, list[float]] = {name: [] for name in [*read, "bare decode"]}
    cpu: dict[str, list[float]] = {name: [] for name in times}
    order = random.Random(0)
    differ: set[Path] = set()
    for _ in range(repeat):
        for p in paths:
            names = list(times)
            order.shuffle(names)
            seen = []
            for name in names:
                c0, t0 = time.process_time(), time.perf_counter()
                if name == "bare decode":
                    _bare_decode(p)
                else:
                    dice = read[name](p).dice
                    seen.append([(d.value, d.color, d.confidence, d.box, d.die, d.uncertain) for d in dice])
                times[name].append((time.perf_counter() - t0) * 1000)
                cpu[name].append((time.process_time() - c0) * 1000)
            if any(other != seen[0] for other in seen[1:]):
                differ.add(p)
    medians = {name: statistics.median(v) for name, v in times.items()}
    return medians | {f"{name}, CPU": statistics.median(v) for name, v in cpu.items()}, len(differ)


def compare_settings(paths: list[Path], repeat: int, variables: str) -> tuple[dict[str, float], int]:
    """The shipped settings against those the COMPANION_* variables ask for, interleaved."""
    from companion.vision import ReadSettings, read_image
    from companion.vision.models import load_models

    env = dict(item.split("=", 1) for item in variables.split())
    other = ReadSettings.from_env(env)
    models, other_models = load_models(), load_models(other.models_dir, other.providers)
    read = {"shipped": lambda p: read_image(p, models), variables: lambda p: read_image(p, other_models, other)}
    return _interleaved(paths, repeat, read)


def cold_start(path: Path, runs: int) -> dict:
    walls, inner, rss = [], [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", COLD, str(path)], capture_output=True, text=True, cwd=ROOT,
                             check=True)
        walls.append((time.perf_counter() - t0) * 1000)
        row = json.loads(out.stdout.strip().splitlines()[-1])
        inner.append(row["inner_ms"])
        rss.append(row["maxrss_mb"])
    return {"median_wall_ms": statistics.median(walls), "max_wall_ms": max(walls),
            "median_import_to_result_ms": statistics.median(inner), "peak_rss_mb": max(rss)}


def print_stages(stages: dict[str, tuple[float, float]]) -> None:
    print(f"per stage, median ms {'wall':>46s} {'CPU':>7s}")
    for name, (wall, cpu) in stages.items():
        print(f"  {name:60s} {wall:7.1f} {cpu:7.1f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", default=str(ROOT / "sample_images"), help="labelled folder to enlarge photos from")
    ap.add_argument("--photos", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--compare-spinning", action="store_true",
                    help="also read interleaved with sessions whose idle threads spin")
    ap.add_argument("--compare-settings", metavar="VARS",
                    help="also read interleaved with the settings these COMPANION_* variables ask for ('A=1 B=2')")
    ap.add_argument("--stages-only", action="store_true",
                    help="only the time per stage of a read (no cold start, no end-to-end timing)")
    ap.add_argument("--make-only", metavar="DIR", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.make_only:
        make_photos(Path(args.source), args.photos, Path(args.make_only))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        # made in a child process, so that this process's peak memory is the reading's alone
        subprocess.run([sys.executable, __file__, "--source", args.source, "--photos", str(args.photos),
                        "--make-only", tmp], check=True)
        paths = sorted(Path(tmp).glob("photo*.jpg"))
        size_mb = np.mean([p.stat().st_size for p in paths]) / 2**20
        print(f"{len(paths)} photos of 12 MP (4000x3000 JPEG, q92, {size_mb:.1f} MB each on average)")
        if args.stages_only:
            from companion.vision.models import load_models

            models = load_models()
            stage_times(paths[:1], 1, models)  # warm
            print_stages(stage_times(paths, args.repeat, models))
            return 0
        cold = cold_start(paths[0], args.cold_runs)
        print(f"cold start (process start -> first result): median {cold['median_wall_ms']:.0f} ms, "
              f"max {cold['max_wall_ms']:.0f} ms (imports -> result {cold['median_import_to_result_ms']:.0f} ms), "
              f"peak RSS {cold['peak_rss_mb']:.0f} MB")
        warm = warm_times(paths, args.repeat)
        print(f"warm, per photo ({warm['n']} reads): median {warm['median_ms']:.1f} ms, p95 {warm['p95_ms']:.1f} ms, "
              f"CPU time {warm['cpu_median_ms']:.1f} ms; peak RSS {warm['peak_rss_mb']:.0f} MB")
        print(f"bare JPEG decode at 1/4 scale, same photos, same run: median {warm['bare_decode_median_ms']:.1f} ms "
              f"(CPU {warm['bare_decode_cpu_median_ms']:.1f} ms); reading takes "
              f"{warm['median_ms'] / warm['bare_decode_median_ms']:.2f} times as long "
              f"({warm['cpu_median_ms'] / warm['bare_decode_cpu_median_ms']:.2f} times the CPU time)")
        print_stages(warm["stages"])
        if args.compare_spinning:
            ab = {name: ms for name, ms in compare_spinning(paths, args.repeat).items() if not name.endswith(", CPU")}
            bare = ab.pop("bare decode")
            print(f"interleaved, shuffled ({args.repeat * len(paths)} reads each; bare decode {bare:.1f} ms): "
                  + ", ".join(f"{name} {ms:.1f} ms ({ms / bare:.2f} times)" for name, ms in ab.items())
                  + "; the same readings")
        if args.compare_settings:
            ab, differ = compare_settings(paths, args.repeat, args.compare_settings)
            bare, bare_cpu = ab.pop("bare decode"), ab.pop("bare decode, CPU")
            print(f"interleaved, shuffled ({args.repeat * len(paths)} reads each; bare decode {bare:.1f} ms, "
                  f"CPU {bare_cpu:.1f} ms): "
                  + ", ".join(f"{name} {ms:.1f} ms ({ms / bare:.2f} times), CPU {ab[name + ', CPU']:.1f} ms "
                              f"({ab[name + ', CPU'] / bare_cpu:.2f} times)" for name, ms in ab.items()
                              if not name.endswith(", CPU"))
                  + f"; {differ} of {len(paths)} photos read differently")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
