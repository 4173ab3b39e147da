"""Fit the reader's doubt model on the choosing sets, and report its curve per set.

    .venv/bin/python -m training.doubt_model collect [--data SET ...] [--limit N]
    .venv/bin/python -m training.doubt_model fit [--seed 52] [--models models]    (make doubt-model)
    .venv/bin/python -m training.doubt_model curve [--data SET ...] [--json out.json]

The doubt model (companion/vision/doubt_model.py) says, per die read, how likely its reading is
wrong (a misread value or colour, or no die's top face at all), from the doubts' continuous scores
and the reader's margins (companion/vision/doubts.py: FEATURES, and MARGINS); a die is flagged from
one operating point (models/tuning.json: doubt_flag_from).

`collect` reads the photos of each set once (by default the first photos of CHOOSING's and
REPORTING's sets: `make data data-stress data-choosing data-v1 data-table` make them) and keeps per
die read its scores, its truth by training.evaluate's matching (right, wrong value, wrong colour,
both, or no die at all) and the reader's own flag, in data/doubt_scores/. `fit` fits on the
choosing sets only (CHOOSING), the trees' depth and number and the operating point chosen on
out-of-fold probabilities (two folds of photos, drawn from `--seed`): the fewest right dice flagged
with TARGET_WRONG_FLAGGED of the wrong dice flagged. It writes the model fitted on every choosing die
to models/doubt_model.json and its operating point into models/tuning.json. `curve` prints, per
set, the share of wrong dice flagged against the share of right dice flagged, and what the player
gets at the operating point (training.evaluate's figures, from the same readings).
"""

from __future__ import annotations

import argparse
import json
import pickle
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from companion.vision.doubt_model import DOUBT_MODEL_FILE, NO_SPLIT, DoubtModel
from companion.vision.doubts import FEATURES, doubt_margins
from companion.vision.models import default_models_dir, load_models
from companion.vision.pipeline import DEFAULT_SETTINGS
from companion.vision.tuning import TUNING_FILE, Tuning, shipped_tuning
from training.common import read_dataset
from training.evaluate import ImageResult, analyse_image, evaluate_analysis, matched_truths, summarise

SCORES_DIR = Path("data/doubt_scores")
MODELS_DIR = Path("models")
# The sets the model is fitted and its threshold chosen on, each its first photos (as many as
# here): calib splits of the generator's look and its first look (make data, data-stress,
# data-choosing, data-v1), never a report set.
CHOOSING: dict[str, int] = {
    "data/calib": 400, "data/stress_warm_calib": 100, "data/stress_cold_calib": 100, "data/stress_dark_calib": 100,
    "data/stress_tilt_calib": 100, "data/more/calib": 300, "data/more/stress_warm_calib": 100,
    "data/more/stress_tilt_calib": 100, "data/more/stress_tilt_calib2": 100, "data/more/stress_dark_calib": 100,
    "data/more/stress_dark_calib2": 100, "data/more/stress_cold_calib": 100, "data/page_calib": 20,
    "data/page_far_calib": 10, "data/v1_calib": 200,
    "data/table/choose": 256, "data/table/warm_choose": 128, "data/table/far_choose": 192}
# The report sets its figures are given on (the model card), each its first photos.
REPORTING: dict[str, int] = {
    "data/val": 400, "data/stress_warm_val": 100, "data/stress_cold_val": 100, "data/stress_dark_val": 100,
    "data/stress_tilt_val": 100, "data/v1_val": 200, "data/far": 12,
    "data/table/report": 384, "data/table/warm_report": 128, "data/table/far_report": 192}
# The operating point: the model flags at least this share of the choosing sets' wrong dice (out of
# fold), the floor the product requires (docs/doubt_model.md), with as few right dice as it can.
TARGET_WRONG_FLAGGED = 0.95
# Truths of a die read: right, its value or colour or both misread, no die's top face, or a face
# mostly cut by the frame (neither right nor wrong: left out of the fit).
RIGHT, WRONG_VALUE, WRONG_COLOUR, WRONG_BOTH, NO_DIE, IGNORED = 0, 1, 2, 3, 4, -1
TRUTHS = {RIGHT: "right", WRONG_VALUE: "wrong value", WRONG_COLOUR: "wrong colour", WRONG_BOTH: "wrong both",
          NO_DIE: "not a die"}
# The stumps: how many thresholds per feature (its quantiles), shrinkage, leaf regularisation.
BINS = 32
LEARNING_RATE = 0.1
LEAF_L2 = 1.0
MIN_LEAF_WEIGHT = 1.0
STEP_CHOICES = (100, 200, 400)
DEPTH_CHOICES = (1, 2)


@dataclass
class PhotoDice:
    """One photo's result (the doubts' own flags) and which rows of its set's scores are its dice."""

    result: ImageResult
    rows: list[int]  # per match of result.matches: its die's row, -1 when missed
    extra_rows: list[int]  # the dice read on no labelled top face
    all_rows: list[int]  # every die read (faces mostly cut by the frame included)


@dataclass
class SetScores:
    name: str
    scores: np.ndarray  # (dice, FEATURES)
    truth: np.ndarray  # (dice,) a TRUTHS code or IGNORED
    ladder: np.ndarray  # (dice,) flagged by the reader as it read them
    photo: np.ndarray  # (dice,) the photo's index in the set
    photos: list[PhotoDice]

    @property
    def wrong(self) -> np.ndarray:
        return self.truth > RIGHT


def _cache(data: str) -> Path:
    return SCORES_DIR / (data.strip("/").replace("/", "__") + ".pkl")


def collect(data: str, limit: int = 0, models_dir: Path | None = None, fresh: bool = False) -> SetScores:
    """The first `limit` photos of `data` (0: all) read once (kept in SCORES_DIR; `fresh`: read again)."""
    path = _cache(data)
    images = read_dataset(data, limit)
    if path.is_file() and not fresh:
        cached: SetScores = pickle.loads(path.read_bytes())
        if cached.scores.shape[1] == len(FEATURES) and len(cached.photos) == len(images):
            return cached
    models = load_models(models_dir or default_models_dir())
    settings = DEFAULT_SETTINGS
    rows_scores, truth, ladder, photo, photos = [], [], [], [], []
    for k, image in enumerate(images):
        analysis, ms = analyse_image(image, models, settings, scores=True)
        result = evaluate_analysis(image, analysis, ms)
        matched = matched_truths(image, analysis)
        base = len(truth)
        by_truth = {j: i for i, j in enumerate(matched) if j >= 0}
        for i, die in enumerate(analysis.dice):
            assert analysis.scores is not None
            rows_scores.append(analysis.scores[i])
            j = matched[i]
            truth.append(NO_DIE if j < 0 else IGNORED if image.dice[j].ignored else _truth(image.dice[j], die))
            ladder.append(die.uncertain)
            photo.append(k)
        labelled = [j for j, t in enumerate(image.dice) if not t.ignored]
        photos.append(PhotoDice(result, [base + by_truth[j] if j in by_truth else -1 for j in labelled],
                                [base + i for i, j in enumerate(matched) if j < 0],
                                list(range(base, base + len(analysis.dice)))))
    out = SetScores(data, np.array(rows_scores).reshape(-1, len(FEATURES)), np.array(truth, dtype=np.int64),
                    np.array(ladder, dtype=bool), np.array(photo, dtype=np.int64), photos)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(out))
    return out


def _truth(label, die) -> int:
    value_wrong, colour_wrong = label.value != die.value, label.color != die.color
    return WRONG_BOTH if value_wrong and colour_wrong else WRONG_VALUE if value_wrong else \
        WRONG_COLOUR if colour_wrong else RIGHT


# --- boosted stumps -----------------------------------------------------------------------------

def _thresholds(x: np.ndarray) -> list[np.ndarray]:
    """Per feature, the candidate thresholds: midpoints between its distinct quantiles, and for a
    doubt's margin its own level too (0)."""
    out = []
    for f in range(x.shape[1]):
        q = np.unique(np.quantile(x[:, f], np.linspace(0.0, 1.0, BINS + 1)))
        cuts = (q[:-1] + q[1:]) / 2 if len(q) > 1 else np.zeros(0)
        if f >= len(FEATURES) and len(q) > 1 and q[0] < 0.0 < q[-1]:
            cuts = np.unique(np.append(cuts, 0.0))
        out.append(cuts)
    return out


def _best_split(bins: np.ndarray, cuts: list[np.ndarray], g: np.ndarray, h: np.ndarray) -> tuple[float, int, int]:
    """The split of these rows that lowers the second-order loss the most: (gain, feature, cut); -1: none."""
    best = (0.0, -1, 0)
    total = g.sum() ** 2 / (h.sum() + LEAF_L2)
    for f, c in enumerate(cuts):
        if not len(c):
            continue
        gl = np.cumsum(np.bincount(bins[:, f], g, len(c) + 1))[:-1]
        hl = np.cumsum(np.bincount(bins[:, f], h, len(c) + 1))[:-1]
        gr, hr = g.sum() - gl, h.sum() - hl
        gain = gl ** 2 / (hl + LEAF_L2) + gr ** 2 / (hr + LEAF_L2) - total
        gain[(hl < MIN_LEAF_WEIGHT) | (hr < MIN_LEAF_WEIGHT)] = 0.0
        k = int(np.argmax(gain))
        if gain[k] > best[0]:
            best = (float(gain[k]), f, k)
    return best


def _leaf(g: np.ndarray, h: np.ndarray) -> float:
    return float(-LEARNING_RATE * g.sum() / (h.sum() + LEAF_L2))


def _side(bins: np.ndarray, cuts: list[np.ndarray], g: np.ndarray, h: np.ndarray) -> tuple[int, float, float, float]:
    """One side of a tree: its split (feature, threshold) and two leaves, or no split (NO_SPLIT)."""
    _, f, k = _best_split(bins, cuts, g, h)
    if f < 0:
        return 0, NO_SPLIT, _leaf(g, h), _leaf(g, h)
    under = bins[:, f] <= k
    return f, float(cuts[f][k]), _leaf(g[under], h[under]), _leaf(g[~under], h[~under])


def fit_trees(x: np.ndarray, y: np.ndarray, steps: int, depth: int = 2, wrong_weight: float = 1.0,
              tuning: Tuning | None = None) -> DoubtModel:
    """Boosted trees (`depth` 1: stumps, 2: a split on each side too) over the scores `x` (n, FEATURES)
    and their margins (doubts.doubt_margins) by Newton steps on the log loss
    (typical: the right dice's median scores). `wrong_weight`: each wrong
    die counts as that many in the loss (the flags are chosen where nearly every wrong die is flagged)."""
    tuning = tuning or shipped_tuning()
    scores, x = x, doubt_margins(x, tuning)
    cuts = _thresholds(x)
    bins = np.stack([np.searchsorted(c, x[:, f], side="right") for f, c in enumerate(cuts)], axis=1)
    rate = float(np.clip(y.mean(), 1e-4, 1 - 1e-4))
    bias = float(np.log(rate / (1 - rate)))
    margin = np.full(len(y), bias)
    trees: list[tuple[list[int], list[float], list[float]]] = []
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-margin))
        w = np.where(y > 0, wrong_weight, 1.0)
        g, h = w * (p - y), w * np.maximum(p * (1 - p), 1e-9)
        _, f, k = _best_split(bins, cuts, g, h)
        if f < 0:
            break
        under = bins[:, f] <= k
        if depth == 1:
            lower = (0, NO_SPLIT, _leaf(g[under], h[under]), 0.0)
            upper = (0, NO_SPLIT, _leaf(g[~under], h[~under]), 0.0)
        else:
            lower = _side(bins[under], cuts, g[under], h[under])
            upper = _side(bins[~under], cuts, g[~under], h[~under])
        tree = ([f, lower[0], upper[0]], [float(cuts[f][k]), lower[1], upper[1]], [lower[2], lower[3], upper[2], upper[3]])
        trees.append(tree)
        margin += _tree_output(tree, x)
    typical = np.median(scores[y == 0], axis=0) if (y == 0).any() else np.zeros(scores.shape[1])
    return DoubtModel(bias, np.array([t[0] for t in trees], dtype=np.int64).reshape(-1, 3),
                      np.array([t[1] for t in trees]).reshape(-1, 3), np.array([t[2] for t in trees]).reshape(-1, 4),
                      typical, tuning)


def _tree_output(tree: tuple[list[int], list[float], list[float]], x: np.ndarray) -> np.ndarray:
    (f0, f1, f2), (t0, t1, t2), (a, b, c, d) = tree
    return np.where(x[:, f0] < t0, np.where(x[:, f1] < t1, a, b), np.where(x[:, f2] < t2, c, d))


def threshold_for(prob: np.ndarray, wrong: np.ndarray, share: float = TARGET_WRONG_FLAGGED) -> float:
    """The highest probability level that flags at least `share` of the wrong dice."""
    p = np.sort(prob[wrong])[::-1]
    if not len(p):
        return 0.5
    k = min(len(p) - 1, int(np.ceil(share * len(p))) - 1)
    return float(p[k])


def right_flagged_at(prob: np.ndarray, wrong: np.ndarray, share: float = TARGET_WRONG_FLAGGED) -> float:
    level = threshold_for(prob, wrong, share)
    return float((prob[~wrong] >= level).mean()) if (~wrong).any() else 0.0


def out_of_fold(sets: list[SetScores], seed: int, steps: int, depth: int = 2, wrong_weight: float = 1.0) -> np.ndarray:
    """Each choosing die's probability from a model fitted on the other fold of photos."""
    x, y, groups = _pooled(sets)
    rng = np.random.default_rng(seed)
    fold = rng.integers(0, 2, groups.max() + 1)[groups]
    out = np.zeros(len(y))
    for k in (0, 1):
        model = fit_trees(x[fold != k], y[fold != k], steps, depth, wrong_weight)
        out[fold == k] = model.probability(x[fold == k])
    return out


def _pooled(sets: list[SetScores]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The dice of the sets (faces cut by the frame left out): scores, wrong, photo groups."""
    xs, ys, gs, offset = [], [], [], 0
    for s in sets:
        keep = s.truth != IGNORED
        xs.append(s.scores[keep])
        ys.append(s.wrong[keep].astype(np.float64))
        gs.append(s.photo[keep] + offset)
        offset += len(s.photos)
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(gs)


def fit(sets: list[SetScores], seed: int, share: float = TARGET_WRONG_FLAGGED) -> tuple[DoubtModel, float, dict]:
    """The trees' depth and number and the operating point chosen out of fold (the fewest right dice
    flagged with `share` of the wrong dice flagged), then the model on every die; its operating point."""
    x, y, _ = _pooled(sets)
    wrong = y > 0
    trials = {}
    for depth in DEPTH_CHOICES:
        for steps in STEP_CHOICES:
            prob = out_of_fold(sets, seed, steps, depth)
            trials[depth, steps] = (right_flagged_at(prob, wrong, share), prob)
            print(f"  depth {depth}, {steps:4d} trees: out of fold, {share:.0%} of wrong dice flagged with "
                  f"{trials[depth, steps][0]:.2%} of right dice flagged", flush=True)
    depth, steps = min(trials, key=lambda k: (trials[k][0], k[1], k[0]))
    prob = trials[depth, steps][1]
    level = threshold_for(prob, wrong, share)
    model = fit_trees(x, y, steps, depth)
    curve = [{"right_flagged": r, "wrong_flagged": w} for r, w in curve_rows(prob, wrong, ~wrong)]
    return model, level, {"depth": depth, "trees": steps, "wrong_share": share,
                          "out_of_fold_right_flagged": trials[depth, steps][0], "out_of_fold_curve": curve,
                          "against_the_reader": compared(sets, prob >= level)}


def write_operating_point(models_dir: Path, level: float) -> None:
    """Set the tuning file's doubt_flag_from to `level` (rounded to 4 places), its other levels as they are."""
    path = models_dir / TUNING_FILE
    data = json.loads(path.read_text("utf-8"))
    data["levels"]["doubt_flag_from"]["value"] = round(level, 4)
    lines = [f"    {json.dumps(name)}: {json.dumps(entry)}" for name, entry in data["levels"].items()]
    head = {k: v for k, v in data.items() if k != "levels"}
    text = "{\n" + "".join(f"  {json.dumps(k)}: {json.dumps(v)},\n" for k, v in head.items())
    path.write_text(text + '  "levels": {\n' + ",\n".join(lines) + "\n  }\n}\n", "utf-8")


def compared(sets: list[SetScores], flags: np.ndarray) -> dict:
    """The choosing sets' dice and photos with `flags` (out of fold, over _pooled's dice) and with
    the flags the reader gave as it read them: wrong dice read flagged, right dice flagged, photos
    with a silent error."""
    out: dict[str, dict[str, float]] = {}
    start = 0
    rows = {"model": [], "as read": []}
    for s in sets:
        keep = np.flatnonzero(s.truth != IGNORED)
        mine = s.ladder.copy()  # a face cut by the frame keeps its flag as read: it is in no figure but sure_dice
        mine[keep] = flags[start:start + len(keep)]
        start += len(keep)
        for name, f in (("model", mine), ("as read", s.ladder)):
            rows[name].append((f[s.wrong].sum(), s.wrong.sum(), f[s.truth == RIGHT].sum(), (s.truth == RIGHT).sum(),
                               sum(r.silent_error for r in flagged_results(s, f)), len(s.photos)))
    for name, r in rows.items():
        a = np.array(r, dtype=np.float64).sum(axis=0)
        out[name] = {"wrong_flagged": a[0] / a[1], "right_flagged": a[2] / a[3], "photos_silent": a[4] / a[5]}
        print(f"  choosing sets, {name:<6}: wrong dice read flagged {a[0]:.0f}/{a[1]:.0f} ({a[0] / a[1]:.2%}), right dice "
              f"flagged {a[2] / a[3]:.2%}, photos with a silent error {a[4]:.0f}/{a[5]:.0f}")
    return out


# --- the curve and what the player gets ---------------------------------------------------------

def flagged_results(s: SetScores, flags: np.ndarray) -> list[ImageResult]:
    """The set's photo results with each die read flagged by `flags` (per row) instead."""
    out = []
    for p in s.photos:
        r = p.result
        matches = [replace(m, uncertain=bool(flags[row])) if row >= 0 else m for m, row in zip(r.matches, p.rows)]
        out.append(replace(r, matches=matches, extras_flagged=int(sum(flags[row] for row in p.extra_rows)),
                           sure_dice=int(sum(not flags[row] for row in p.all_rows))))
    return out


def player(s: SetScores, flags: np.ndarray) -> dict:
    """training.evaluate's figures with these flags, and the right dice flagged (needless flags)."""
    figures = summarise(flagged_results(s, flags))
    right = s.truth == RIGHT
    figures["right_flagged"] = float(flags[right].mean()) if right.any() else 0.0
    return figures


def curve_rows(prob: np.ndarray, wrong: np.ndarray, right: np.ndarray,
               levels: tuple[float, ...] = (0.01, 0.02, 0.03, 0.05, 0.1, 0.2)) -> list[tuple[float, float]]:
    """(right dice flagged, wrong dice flagged) at thresholds flagging these shares of the right dice."""
    out = []
    for share in levels:
        level = float(np.quantile(prob[right], 1 - share)) if right.any() else 1.0
        out.append((float((prob[right] >= level).mean()) if right.any() else 0.0,
                    float((prob[wrong] >= level).mean()) if wrong.any() else 1.0))
    return out


def describe(s: SetScores, model: DoubtModel) -> dict:
    """Print the set's curve, and what the player gets with the flags as read and with the model at
    its operating point; the figures, for a JSON file."""
    prob = model.probability(s.scores)
    wrong, right = s.wrong, s.truth == RIGHT
    flags = model.flags(s.scores)
    before, after = player(s, s.ladder), player(s, flags)
    print(f"{s.name}: {len(s.photos)} photos, {int(right.sum())} right dice read, {int(wrong.sum())} wrong "
          f"({', '.join(f'{n} {TRUTHS[c]}' for c in TRUTHS if c and (n := int((s.truth == c).sum())))})")
    print("  curve (right dice flagged -> wrong dice flagged): " +
          ", ".join(f"{r:.1%} -> {w:.1%}" for r, w in curve_rows(prob, wrong, right)))
    for name, f in (("as read", before), ("doubt model", after)):
        print(f"  {name:<11} wrong dice read flagged {_share(flags if name == 'doubt model' else s.ladder, wrong)}, "
              f"right flagged {f['right_flagged']:.2%}; photos all right {f['photos_all_right']:.2%}, "
              f"face {f['face_acc']:.2%}, recall {f['recall']:.2%}, silent photos {f['photos_silent_error']:.2%}, "
              f"wrong flagged {f['wrong_flagged']:.1%} of {f['wrong_dice']}, swaps {f['colour_swaps']:.2%}")
    return {"as_read": before, "model": after, "curve": curve_rows(prob, wrong, right)}


# The levels of doubt_die_drop `kinds` compares (log-odds).
DIE_DROPS = (0.5, 1.0, 1.5, 2.0, 3.0)


def kinds(sets: list[SetScores], model: DoubtModel) -> dict[float, int]:
    """Per level of doubt_die_drop: of the sets' wrong dice the model flags, how many are asked
    what is wrong with them (a misread value "value", a misread colour "color", both either of the
    two, no die's top face "die"); printed per truth."""
    x = np.concatenate([s.scores[s.wrong & model.flags(s.scores)] for s in sets])
    truth = np.concatenate([s.truth[s.wrong & model.flags(s.scores)] for s in sets])
    weaker = np.where(x[:, list(FEATURES).index("value_prob")] <= x[:, list(FEATURES).index("colour_prob")], "value", "color")
    drop = model.die_drop(x)
    right = {WRONG_VALUE: ("value",), WRONG_COLOUR: ("color",), WRONG_BOTH: ("value", "color"), NO_DIE: ("die",)}
    out = {}
    for level in DIE_DROPS:
        kind = np.where(drop > level, "die", weaker)
        out[level] = int(sum(k in right[int(t)] for k, t in zip(kind, truth)))
        per = "; ".join(f"{TRUTHS[t]}: " + ", ".join(f"{k} {int(((truth == t) & (kind == k)).sum())}" for k in ("value", "color", "die"))
                        for t in right)
        print(f"  doubt_die_drop {level}: {out[level]}/{len(truth)} asked what is wrong ({per})")
    return out


def _share(flags: np.ndarray, wrong: np.ndarray) -> str:
    return f"{int(flags[wrong].sum())}/{int(wrong.sum())}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="read the sets' photos and keep the doubts' scores")
    c.add_argument("--data", nargs="+", default=[*CHOOSING, *REPORTING])
    c.add_argument("--limit", type=int, default=None, help="the first N photos of each (default: CHOOSING's, REPORTING's)")
    c.add_argument("--fresh", action="store_true", help="read the photos again, whatever data/doubt_scores/ holds")
    f = sub.add_parser("fit", help="fit the doubt model on the choosing sets (CHOOSING)")
    f.add_argument("--seed", type=int, default=52, help="draws the folds of photos")
    f.add_argument("--models", type=Path, default=MODELS_DIR,
                   help="writes the model here (doubt_model.json) and its operating point into its tuning.json")
    sub.add_parser("kinds", help="the kind asked of the choosing sets' wrong dice flagged, per doubt_die_drop")
    k = sub.add_parser("curve", help="per set: the curve and what the player gets")
    k.add_argument("--data", nargs="+", default=[*CHOOSING, *REPORTING])
    k.add_argument("--limit", type=int, default=None, help="the first N photos of each (default: CHOOSING's, REPORTING's)")
    k.add_argument("--models", type=Path, default=MODELS_DIR, help="the doubt model's and its tuning's folder")
    k.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    def limit(data: str) -> int:
        return args.limit if args.limit is not None else {**CHOOSING, **REPORTING}.get(data, 0)

    if args.command == "collect":
        for data in args.data:
            s = collect(data, limit(data), fresh=args.fresh)
            print(f"{data}: {len(s.photos)} photos, {len(s.truth)} dice read, {int(s.wrong.sum())} wrong")
        return 0
    if args.command == "fit":
        sets = [collect(d, n) for d, n in CHOOSING.items()]
        model, level, chosen = fit(sets, args.seed)
        data = {**model.to_json(), "fitted": {"seed": args.seed, "photos": {s.name: len(s.photos) for s in sets},
                                              "flag_from": level, **chosen}}
        (args.models / DOUBT_MODEL_FILE).write_text(json.dumps(data, indent=1) + "\n", "utf-8")
        write_operating_point(args.models, level)
        print(f"{args.models / DOUBT_MODEL_FILE}: depth {chosen['depth']}, {chosen['trees']} trees; "
              f"{args.models / TUNING_FILE}: doubt_flag_from {round(level, 4)}")
        return 0
    models_dir = getattr(args, "models", MODELS_DIR)
    model = DoubtModel.load(models_dir / DOUBT_MODEL_FILE, Tuning.load(models_dir))
    if args.command == "kinds":
        kinds([collect(d, n) for d, n in CHOOSING.items()], model)
        return 0
    figures = {d: describe(collect(d, limit(d)), model) for d in args.data}
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1, default=float), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
