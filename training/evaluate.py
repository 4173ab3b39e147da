"""Evaluate the whole reading pipeline (the ONNX models as shipped) on labelled datasets.

    .venv/bin/python -m training.evaluate --data data/val [data/far ...] [--models models] [--json out.json]

Prints, for every set, two tables, overall and by condition (the `conditions` of labels.jsonl).

What the player gets: the photos with a silent error (a wrong, missed or extra die that is
not flagged: a misread or extra die is flagged when it is marked uncertain, a missed die when
the photo gives fewer than 10 sure dice, as the page then asks for the rest), the share of
wrong dice (misread, missed or extra) that are flagged, the needless flags (the share of the dice
read right that are flagged), colour swaps (red/orange, green/blue)
as a share of the dice found, dice read twice (a second box on a cube whose top face is read),
and the phase outcome: for each (photo, phase 1..10) pair, whether made-or-missed and the score
of the dice read equal those of the true dice ("agree"), and the pairs that disagree in a photo
with no flag at all ("silent").

The models' figures: detection recall and
precision (IoU >= 0.5), value, colour and full-face accuracy of the detected dice, the share
of all dice read right (a missed die counts as wrong), the rate of photos with every die right
(and nothing extra), the rate of photos where nothing is wrong without a flag (every die
found, nothing extra, each misread die flagged uncertain: the player need only check what the
scorepad marks), the die-id accuracy, and a reliability table of the confidences.
Top faces mostly cut by the frame (truncated, under 75% visible) count neither as misses nor
as false detections; faces at least 75% visible count like any other.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from companion.dice import MAX_DICE, Color, Face
from companion.rules import best_score
from companion.rules.phases import PHASES
from companion.vision.image_io import load_work_image
from companion.vision.models import load_models
from companion.vision.pipeline import DEFAULT_SETTINGS, Analysis, analyse
from companion.vision.settings import ReadSettings
from training.common import LabelledImage, read_dataset
from training.misreads import misread_sheet

IOU_MIN = 0.5


@dataclass
class Match:
    """One labelled die and what the pipeline said about it (pred None = missed)."""

    truth: Face
    truth_die: str | None
    pred: Face | None = None
    pred_die: str | None = None
    confidence: float = 0.0
    uncertain: bool = False
    value_logits: np.ndarray | None = None
    color_logits: np.ndarray | None = None
    truth_box: tuple[float, float, float, float] | None = None  # full-size photo pixels

    @property
    def right(self) -> bool:
        return self.pred == self.truth


SWAPS = ({Color.RED, Color.ORANGE}, {Color.GREEN, Color.BLUE})  # the ink pairs that look alike


def colour_swapped(m: Match) -> bool:
    return m.pred is not None and m.pred.color != m.truth.color and {m.pred.color, m.truth.color} in SWAPS


@dataclass
class ImageResult:
    image: LabelledImage
    matches: list[Match] = field(default_factory=list)
    false_positives: int = 0
    ms: float = 0.0
    extras_flagged: int = 0  # false positives marked uncertain
    read_twice: int = 0  # false positives on a cube whose top face is read too
    sure_dice: int = 0  # dice read without a flag
    extra_faces: tuple[Face, ...] = ()  # what the false positives were read as

    @property
    def missing_flagged(self) -> bool:
        """Fewer than 10 sure dice: the page asks for the dice it did not read."""
        return self.sure_dice < MAX_DICE

    @property
    def flagged(self) -> bool:
        """Anything in the photo flagged: a die marked uncertain or fewer than 10 sure dice."""
        return self.missing_flagged or self.extras_flagged > 0 or any(m.uncertain for m in self.matches)

    def wrong(self) -> tuple[int, int]:
        """(wrong dice: misread, missed or extra; of them flagged)."""
        misread = [m for m in self.matches if m.pred is not None and not m.right]
        missed = sum(m.pred is None for m in self.matches)
        flagged = sum(m.uncertain for m in misread) + (missed if self.missing_flagged else 0) + self.extras_flagged
        return len(misread) + missed + self.false_positives, flagged

    @property
    def silent_error(self) -> bool:
        wrong, flagged = self.wrong()
        return flagged < wrong

    def read_faces(self) -> list[Face]:
        """The dice the scorepad gets (a reading of a face mostly out of the frame left out)."""
        return ([m.pred for m in self.matches if m.pred is not None] + list(self.extra_faces))[:MAX_DICE]

    def phase_outcomes(self) -> list[bool]:
        """Per phase 1..10: do the dice read make it (or miss it) with the true dice's score?"""
        truth = [m.truth for m in self.matches][:MAX_DICE]
        read = self.read_faces()
        return [_best(p, read) == _best(p, truth) for p in range(1, len(PHASES) + 1)]

    @property
    def all_right(self) -> bool:
        return self.false_positives == 0 and all(m.right for m in self.matches)

    @property
    def nothing_silently_wrong(self) -> bool:
        """Every die found, nothing extra, and each misread die flagged: the player need only
        check the dice the scorepad marks."""
        return self.false_positives == 0 and all(
            m.pred is not None and (m.right or m.uncertain) for m in self.matches)


def _best(phase: int, faces: list[Face]) -> int | None:
    return best_score(phase, faces) if faces else None


def _inside(point: tuple[float, float], polygon: np.ndarray) -> bool:
    import cv2

    return cv2.pointPolygonTest(polygon.astype(np.float32), (float(point[0]), float(point[1])), False) >= 0


def _cube_outline(die) -> np.ndarray | None:
    """The labelled cube outline, or for older labels the top face grown 1.8 times about its
    centre (at 40 degrees of tilt a side face reaches about that far)."""
    if die.cube is not None:
        return die.cube
    if die.polygon is None:
        return None
    centre = die.polygon.mean(axis=0)
    return centre + 1.8 * (die.polygon - centre)


def box_iou(a, b) -> float:
    x0, y0 = max(a[0], b[0]), max(a[1], b[1])
    x1, y1 = min(a[2], b[2]), min(a[3], b[3])
    inter = max(0.0, x1 - x0) * max(0.0, y1 - y0)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def match_boxes(boxes: list, scores: list[float], truths: list) -> list[int]:
    """Per box, the index of the labelled die it reads, or -1: the surer boxes are matched
    first, each to the free labelled top face it overlaps most, at box IoU >= IOU_MIN."""
    taken: set[int] = set()
    out = [-1] * len(boxes)
    for i in sorted(range(len(boxes)), key=lambda i: -scores[i]):
        best = max(((box_iou(boxes[i], t.box), j) for j, t in enumerate(truths) if j not in taken), default=(0.0, -1))
        if best[0] >= IOU_MIN:
            taken.add(best[1])
            out[i] = best[1]
    return out


def evaluate_image(image: LabelledImage, models, settings: ReadSettings = DEFAULT_SETTINGS) -> ImageResult:
    return evaluate_analysis(image, *analyse_image(image, models, settings))


def analyse_image(image: LabelledImage, models, settings: ReadSettings = DEFAULT_SETTINGS,
                  scores: bool = False) -> tuple[Analysis, float]:
    """The pipeline's analysis of a labelled photo (with `scores`, the doubts' scores too), and the
    milliseconds it took (decode included)."""
    t0 = time.perf_counter()
    result = analyse(load_work_image(image.path), models, settings, scores=scores)
    return result, (time.perf_counter() - t0) * 1000


def matched_truths(image: LabelledImage, result: Analysis) -> list[int]:
    """Per die of `result`, the index of the labelled die it reads, or -1 (match_boxes)."""
    return match_boxes([d.box for d in result.dice], [d.score for d in result.detections], list(image.dice))


def evaluate_analysis(image: LabelledImage, result: Analysis, ms: float = 0.0) -> ImageResult:
    """What the player gets from one analysed photo, against its labels."""
    out = ImageResult(image, ms=ms)
    truths = list(image.dice)
    scores = [d.score for d in result.detections]
    matched = matched_truths(image, result)
    taken = {j for j in matched if j >= 0}
    matches: dict[int, Match] = {}
    out.sure_dice = sum(not d.uncertain for d in result.dice)
    extras = []
    for i in sorted(range(len(result.dice)), key=lambda i: -scores[i]):
        reading, j = result.dice[i], matched[i]
        if j < 0:
            extras.append(reading)
            continue
        if truths[j].ignored:
            continue  # a face mostly cut by the frame: reading it is neither right nor wrong
        matches[j] = Match(Face(truths[j].value, truths[j].color), truths[j].die, reading.face, reading.die,
                           reading.confidence, reading.uncertain, result.value_logits[i], result.color_logits[i],
                           truths[j].box)
    for j, t in enumerate(truths):
        if not t.ignored:
            out.matches.append(matches.get(j) or Match(Face(t.value, t.color), t.die, truth_box=t.box))
    out.false_positives = len(extras)
    out.extras_flagged = sum(r.uncertain for r in extras)
    out.extra_faces = tuple(r.face for r in extras)
    read_cubes = [poly for j, t in enumerate(truths) if j in taken and (poly := _cube_outline(t)) is not None]
    out.read_twice = count_read_twice([r.box for r in extras], read_cubes)
    return out


def count_read_twice(extra_boxes: list, read_cubes: list[np.ndarray]) -> int:
    """Of the readings on no top face (`extra_boxes`), those whose centre lies in the outline
    of a cube whose top face is read (`read_cubes`): a die read twice."""
    return sum(any(_inside(((b[0] + b[2]) / 2, (b[1] + b[3]) / 2), poly) for poly in read_cubes)
               for b in extra_boxes)


def summarise(results: list[ImageResult]) -> dict:
    ms = [m for r in results for m in r.matches]
    found = [m for m in ms if m.pred is not None]
    fp = sum(r.false_positives for r in results)
    named = [m for m in found if m.pred_die is not None]
    return {
        "photos": len(results),
        "dice": len(ms),
        "recall": len(found) / max(1, len(ms)),
        "precision": len(found) / max(1, len(found) + fp),
        "value_acc": sum(m.pred.value == m.truth.value for m in found) / max(1, len(found)),
        "color_acc": sum(m.pred.color == m.truth.color for m in found) / max(1, len(found)),
        "face_acc": sum(m.right for m in found) / max(1, len(found)),
        "dice_right": sum(m.right for m in ms) / max(1, len(ms)),
        "photos_all_right": sum(r.all_right for r in results) / max(1, len(results)),
        "photos_nothing_silently_wrong": sum(r.nothing_silently_wrong for r in results) / max(1, len(results)),
        "die_named": len(named) / max(1, len(found)),
        "die_id_acc": sum(m.pred_die == m.truth_die for m in named) / max(1, len(named)),
        "flagged": sum(m.uncertain for m in found) / max(1, len(found)),
        "acc_unflagged": sum(m.right for m in found if not m.uncertain) / max(1, sum(not m.uncertain for m in found)),
        **player_figures(results),
    }


def player_figures(results: list[ImageResult]) -> dict:
    """What the player gets (see the module docstring)."""
    found = [m for r in results for m in r.matches if m.pred is not None]
    right = [m for m in found if m.right]
    wrong = [r.wrong() for r in results]
    outcomes = [(ok, r.flagged) for r in results for ok in r.phase_outcomes()]
    return {
        "photos_silent_error": sum(r.silent_error for r in results) / max(1, len(results)),
        "wrong_dice": sum(w for w, _ in wrong),
        "wrong_flagged": sum(f for _, f in wrong) / max(1, sum(w for w, _ in wrong)),
        "right_flagged": sum(m.uncertain for m in right) / max(1, len(right)),
        "colour_swaps": sum(colour_swapped(m) for m in found) / max(1, len(found)),
        "swapped": sum(colour_swapped(m) for m in found),
        "swapped_unflagged": sum(colour_swapped(m) and not m.uncertain for m in found),
        "found": len(found),
        "read_twice": sum(r.read_twice for r in results),
        "phase_agree": sum(ok for ok, _ in outcomes) / max(1, len(outcomes)),
        "phase_silent_disagree": sum(not ok and not flagged for ok, flagged in outcomes) / max(1, len(outcomes)),
    }


def reliability(results: list[ImageResult], edges=(0.0, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0001)) -> list[dict]:
    found = [m for r in results for m in r.matches if m.pred is not None]
    rows = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = [m for m in found if lo <= m.confidence < hi]
        if inside:
            rows.append({"bin": f"{lo:.2f}-{min(hi, 1.0):.2f}", "n": len(inside),
                         "mean_conf": float(np.mean([m.confidence for m in inside])),
                         "accuracy": sum(m.right for m in inside) / len(inside)})
    return rows


def expected_calibration_error(results: list[ImageResult]) -> float:
    found = [m for r in results for m in r.matches if m.pred is not None]
    if not found:
        return 0.0
    bins = defaultdict(list)
    for m in found:
        bins[min(9, int(m.confidence * 10))].append(m)
    return sum(abs(np.mean([m.confidence for m in b]) - np.mean([m.right for m in b])) * len(b)
               for b in bins.values()) / len(found)


SKIP_CONDITIONS = {"seed", "index", "split"}  # bookkeeping, not conditions


def _flat_conditions(conditions: dict) -> dict:
    """Nested dicts become dotted keys (light.kelvin); lists are left out (too many combinations)."""
    out = {}
    for key, value in conditions.items():
        if key in SKIP_CONDITIONS:
            continue
        if isinstance(value, dict):
            for sub, v in value.items():
                if not isinstance(v, (dict, list)):
                    out[f"{key}.{sub}"] = v
        elif not isinstance(value, list):
            out[key] = value
    return out


def condition_groups(results: list[ImageResult], max_levels: int = 40) -> dict[str, dict[str, list[ImageResult]]]:
    """Group photos by each condition: categories as they are, numbers in three equal-count bands."""
    flat = [(r, _flat_conditions(r.image.conditions)) for r in results]
    keys = sorted({k for _, c in flat for k in c})
    groups: dict[str, dict[str, list[ImageResult]]] = {}
    for key in keys:
        vals = [(r, c.get(key)) for r, c in flat]
        numeric = [v for _, v in vals if isinstance(v, (int, float)) and not isinstance(v, bool)]
        levels: dict[str, list[ImageResult]] = defaultdict(list)
        if numeric and len(set(numeric)) > 6:
            cuts = np.quantile(numeric, [1 / 3, 2 / 3])
            bounds = [min(numeric), cuts[0], cuts[1], max(numeric)]
            for r, v in vals:
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    band = 0 if v < cuts[0] else 1 if v < cuts[1] else 2
                    levels[f"{bounds[band]:.3g}..{bounds[band + 1]:.3g}"].append(r)
        else:
            for r, v in vals:
                levels[str(v)].append(r)
            if len(levels) > max_levels:
                continue  # free text with many values: no useful breakdown
        if len(levels) > 1:
            groups[key] = dict(sorted(levels.items(), key=lambda kv: _level_order(kv[0])))
    return groups


def _level_order(level: str):
    try:
        return (0, float(level.split("..")[0]), level)
    except ValueError:
        return (1, 0.0, level)


def _fmt(summary: dict) -> str:
    return (f"{summary['photos']:6d} {summary['dice']:6d}  rec {summary['recall']:.4f}  prec {summary['precision']:.4f}  "
            f"val {summary['value_acc']:.4f}  col {summary['color_acc']:.4f}  face {summary['face_acc']:.4f}  "
            f"right {summary['dice_right']:.4f}  photos {summary['photos_all_right']:.4f}")


def _fmt_player(s: dict) -> str:
    return (f"{s['photos']:6d} {s['dice']:6d}  silent {s['photos_silent_error']:.2%}  "
            f"wrong flagged {s['wrong_flagged']:.1%} of {s['wrong_dice']}  right flagged {s['right_flagged']:.1%}  swaps {s['colour_swaps']:.2%}  "
            f"twice {s['read_twice']}  phases agree {s['phase_agree']:.2%}  silent {s['phase_silent_disagree']:.2%}")


def report(results: list[ImageResult], out=print) -> dict:
    overall = summarise(results)
    by_condition = {}
    groups = condition_groups(results)
    out(f"what the player gets{'':<4}photos   dice")
    out(f"  {'all':<22}{_fmt_player(overall)}")
    for key, levels in groups.items():
        out(f"by {key}")
        by_condition[key] = {}
        for level, rs in levels.items():
            s = summarise(rs)
            by_condition[key][level] = s
            out(f"  {level[:22]:<22}{_fmt_player(s)}")
    out(f"the models{'':<14}photos   dice")
    out(f"  {'all':<22}{_fmt(overall)}")
    out(f"  die id named for {overall['die_named']:.1%} of found dice, right {overall['die_id_acc']:.4f}; "
        f"flagged uncertain {overall['flagged']:.1%}, accuracy of the unflagged {overall['acc_unflagged']:.4f}")
    out(f"  photos with nothing wrong unflagged (all found, no extra, every misread flagged): "
        f"{overall['photos_nothing_silently_wrong']:.4f}")
    for key, levels in groups.items():
        out(f"by {key}")
        for level in levels:
            out(f"  {level[:22]:<22}{_fmt(by_condition[key][level])}")
    rel = reliability(results)
    ece = expected_calibration_error(results)
    out(f"reliability (confidence of the decoded face vs accuracy), ECE {ece:.4f}")
    for row in rel:
        out(f"  {row['bin']:<11} n={row['n']:<6d} conf {row['mean_conf']:.3f}  acc {row['accuracy']:.3f}")
    wrong = [(r.image.path.name, m) for r in results for m in r.matches if not m.right]
    if wrong:
        out(f"first misreadings ({len(wrong)} in all):")
        for name, m in wrong[:15]:
            said = m.pred.token if m.pred else "missed"
            out(f"  {name}: {m.truth.token} read as {said} (confidence {m.confidence:.2f})")
    ms = [r.ms for r in results]
    out(f"time per photo (this dataset's size, incl. decode): median {np.median(ms):.1f} ms")
    return {"overall": overall, "by_condition": by_condition, "reliability": rel, "ece": ece}


CARD_HEADER = ("| set | role | photos | photos all right | face accuracy | recall | silent photos | flagged wrong "
               "| needless flags | swaps |\n|---|---|---|---|---|---|---|---|---|---|")


def card_row(name: str, s: dict) -> str:
    """One set's row of the model card's table: a set of the calib split chooses, any other reports."""
    role = "choose" if "calib" in Path(name).name else "report"
    flagged = f"{s['wrong_flagged']:.1%}" if s["wrong_dice"] else "-"
    return (f"| `{name}` | {role} | {s['photos']} | {s['photos_all_right']:.3f} | {s['face_acc']:.4f} | "
            f"{s['recall']:.4f} | {s['photos_silent_error']:.2%} | {flagged} | "
            f"{s['right_flagged']:.1%} | {s['colour_swaps']:.2%} |")


# The conditions the issue's swap targets name: the dice's body colour, the table and the light
SWAP_CONDITIONS = ("body", "table", "light_kind")
SWAP_HEADER = "| set | condition | dice found | swaps | of them unflagged |\n|---|---|---|---|---|"


def swap_rows(name: str, results: list[ImageResult]) -> list[str]:
    """The model card's swap table for one set: the colour swaps (flagged or not) among the dice
    found, over the set and per level of each of SWAP_CONDITIONS the set's photos vary in."""
    groups = condition_groups(results)
    rows = [("all", results)] + [(f"{key} {level}", rs) for key in SWAP_CONDITIONS
                                 for level, rs in groups.get(key, {}).items()]
    out = []
    for condition, rs in rows:
        s = player_figures(rs)
        out.append(f"| `{name}` | {condition} | {s['found']} | {s['swapped']} ({s['colour_swaps']:.2%}) | "
                   f"{s['swapped_unflagged']} |")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, nargs="+", help="dataset folders (labels.jsonl + images)")
    ap.add_argument("--models", help="models folder (default: COMPANION_MODELS, else the repo's models/)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N photos")
    ap.add_argument("--json", help="also write the figures to this JSON file")
    ap.add_argument("--table", help="also write the model card's table (one row per set) to this file")
    ap.add_argument("--swaps", help="also write the colour swaps per body, table and light (SWAP_CONDITIONS) to this file")
    ap.add_argument("--misreads", help="also draw the first misread faces, truth > reading, into this image")
    args = ap.parse_args(argv)
    settings = ReadSettings.from_env()  # COMPANION_* switches, as the CLI reads them
    models = load_models(Path(args.models) if args.models else settings.models_dir, settings.providers)
    figures, everything, by_set = {}, [], {}
    for data in args.data:
        images = read_dataset(data, args.limit)
        results = [evaluate_image(im, models, settings) for im in images]
        print(f"dataset {data}: {len(images)} photos")
        figures[data] = report(results)
        everything += results
        by_set[data] = results
    if args.json:
        Path(args.json).write_text(json.dumps(figures[args.data[0]] if len(args.data) == 1 else figures, indent=1))
    if args.table:
        rows = [card_row(data, figures[data]["overall"]) for data in args.data]
        Path(args.table).write_text("\n".join([CARD_HEADER, *rows]) + "\n")
    if args.swaps:
        rows = [row for data in args.data for row in swap_rows(data, by_set[data])]
        Path(args.swaps).write_text("\n".join([SWAP_HEADER, *rows]) + "\n")
    if args.misreads:
        misread_sheet(everything, Path(args.misreads))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
