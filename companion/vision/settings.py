"""How photos are read: one frozen settings object, made once and passed down.

    from companion.vision import ReadSettings, read_image
    reading = read_image("photo.jpg", settings=ReadSettings(reader_turns=1))

The defaults are the shipped pipeline. The CLI and the server make theirs once at start
(companion/runtime.py) with `ReadSettings.from_env()`, from the COMPANION_* variables of ENVIRONMENT
(for deployments and comparisons), then the command line's flags. docs/vision.md's list of the
variables is `environment_table()` (tests/test_vision_settings.py checks it).

Nothing reads the environment at import.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path

from companion.vision.decoder import DecodeSettings
from companion.vision.tuning import PipelineLevels, Tuning

CPU_PROVIDERS = ("CPUExecutionProvider",)
MAX_VIEWS = 4  # the detector's mirror views: none, left-right, up-down, both
MAX_TURNS = 4  # the reader's quarter turns


class Tuned(enum.Enum):
    """A level left to the models' tuning file (models/tuning.json, tuning.PipelineLevels)."""

    TUNED = "tuned"


TUNED = Tuned.TUNED


@dataclass(frozen=True, slots=True)
class ReadSettings:
    """Where the models are and the pipeline's run-time choices (see the module docstring).

    A level left TUNED is the models' tuning file's (`levels`); one given here overrides it."""

    models_dir: Path | None = None  # None: the package's own models
    providers: tuple[str, ...] = CPU_PROVIDERS  # onnxruntime execution providers, in order
    reader_turns: int = MAX_TURNS  # quarter turns of a crop the reader may vote over
    reader_sure: float | Tuned = TUNED  # a crop the first two turns leave at or under this is read at the others too
    reader_sure_one: float | Tuned = TUNED  # a crop the upright turn leaves at or under this is read at the second
    # a crop the joined reader's first part reads above this on every head, upright, is read by it alone
    # (reader.load_parts; 1.0: every crop by all parts; every crop by all where an embedding is needed)
    reader_cascade: float | Tuned = TUNED
    detector_views: int | None = None  # None: the views the calibration's thresholds were chosen with
    # the mirror views only around the upright view's peaks of this heat: above a face, under none, whatever
    # they add (detector.views_near_peaks; None: the whole image)
    mirror_band: tuple[float, float] | None | Tuned = TUNED
    zoom_small_faces: bool = True  # search a photo of small faces again in its sharper copy
    zoomed_views: int | None | Tuned = TUNED  # that search's mirror views (None: the first search's; own pixels: always those)
    zoom_within_work: bool = True  # without a sharper copy, search again in the working image at a larger input
    faint_heat: float | Tuned = TUNED  # heat that marks ground for the second search (regions.faint_regions)
    balance_light: bool = True  # under a light beyond the training look's, correct the crops (white_balance.py)
    # the colour of crops so corrected from the head learnt for them (light_colour.py), when the models have one
    light_colour_head: bool = True
    # decide the ink colours of a photo's dice together (joint_colour.py), under an unusual light or on dark bodies
    joint_colour: bool = True
    # with joint_colour, under the usual light too: light bodies' inks split by the photo's own (joint_colour.split_inks)
    usual_light_joint: bool = True
    # on dark bodies the face head is less sure of top faces: a box the detector is sure of is read as a die
    # from this face probability (None: the calibration's face threshold everywhere)
    dark_face_threshold: float | None | Tuned = TUNED
    # a face only the upright view finds (a dark die's thin top face, seen side-on: stage1_find_faces.faint_faces)
    # is read as a die from this face probability (None: never)
    faint_face_threshold: float | None | Tuned = TUNED
    # drop a box the cube model calls a second one on a cube (cubes.py; False: flag it instead)
    one_per_cube: bool = True
    # the decision flags measured not at all (companion/vision/doubts.py: SWITCHABLE names them; their
    # scores then read 0 for the doubt model), for comparing what each adds; all on in the shipped pipeline
    disabled_doubts: frozenset[str] = frozenset()
    # a peak beyond a kept box (the doubt "missed_tops": top_faces.py) whose face probability lies outside
    # the first band upright, or the second after two turns, is read no further (empty: every turn)
    missed_top_bands: tuple[tuple[float, float], ...] | Tuned = TUNED
    decoding: DecodeSettings | Tuned = TUNED  # what the decoder names and flags (decoder.py)

    def levels(self, tuning: Tuning) -> PipelineLevels:
        """The run-time levels: the tuning's, those these settings give overriding them."""
        given = {f.name: getattr(self, f.name) for f in fields(PipelineLevels)}
        return replace(tuning.pipeline, **{name: v for name, v in given.items() if v is not TUNED})

    def __post_init__(self) -> None:
        if not 1 <= self.reader_turns <= MAX_TURNS:
            raise ValueError(f"The reader votes over 1 to {MAX_TURNS} turns, not {self.reader_turns}.")
        for name in ("detector_views", "zoomed_views"):
            views = getattr(self, name)
            if isinstance(views, int) and not 1 <= views <= MAX_VIEWS:
                raise ValueError(f"The detector takes 1 to {MAX_VIEWS} mirror views, not {views} ({name}).")
        for name in ("reader_sure", "reader_sure_one", "reader_cascade", "dark_face_threshold", "faint_face_threshold"):
            level = getattr(self, name)
            if isinstance(level, float | int) and not 0.0 <= level <= 1.0:
                raise ValueError(f"{name} is a probability (0..1), not {level}.")
        bands = [] if self.missed_top_bands is TUNED else self.missed_top_bands
        for name, band in [("mirror_band", self.mirror_band), *(("missed_top_bands", b) for b in bands)]:
            if isinstance(band, tuple) and not 0.0 <= band[0] <= band[1] <= 1.0:
                raise ValueError(f"{name} holds (low, high) with 0 <= low <= high <= 1, not {band}.")
        if isinstance(self.faint_heat, float | int) and not 0.0 <= self.faint_heat <= 1.0:
            raise ValueError(f"faint_heat is a heatmap level (0..1), not {self.faint_heat}.")
        if not self.providers:
            raise ValueError("At least one onnxruntime execution provider is needed.")
        unknown = sorted(set(self.disabled_doubts) - _switchable()) if self.disabled_doubts else []
        if unknown:
            raise ValueError(f"No doubt is named {', '.join(unknown)} (the doubts: {', '.join(sorted(_switchable()))}).")

    def without_doubts(self, *names: str) -> ReadSettings:
        """These settings with the doubts `names` off too."""
        return replace(self, disabled_doubts=self.disabled_doubts | frozenset(names))

    def with_doubts(self, *names: str) -> ReadSettings:
        """These settings with the doubts `names` on again."""
        return replace(self, disabled_doubts=self.disabled_doubts - frozenset(names))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ReadSettings:
        """The settings the environment asks for (unset variables keep the defaults).

        Raises ValueError, naming the variable, for a value that is not understood.
        """
        env = os.environ if environ is None else environ
        kw = {var.field: var.parse(var.name, env[var.name].strip()) for var in ENVIRONMENT if env.get(var.name)}
        try:
            return cls(**kw)  # type: ignore[arg-type]
        except ValueError as exc:
            raise ValueError(f"The COMPANION_* environment is not usable: {exc}") from None


def _switchable() -> frozenset[str]:
    from companion.vision.doubts import SWITCHABLE  # doubts.py imports what imports this module

    return SWITCHABLE


def _int(name: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, not {text!r}.") from None


def _float(name: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{name} must be a number, not {text!r}.") from None


def _switch(name: str, text: str) -> bool:
    return text != "0"


def _path(name: str, text: str) -> Path:
    return Path(text)


def _level_or_none(name: str, text: str) -> float | None:
    return None if text.lower() == "none" else _float(name, text)


def _views_or_none(name: str, text: str) -> int | None:
    return _int(name, text) or None


def _bands(name: str, text: str) -> tuple[tuple[float, float], ...]:
    """Bands "low,high;low,high;...", one per stage; "all": none."""
    if text.lower() == "all":
        return ()
    return tuple(_parse_band(part, name) for part in text.split(";"))


def _band(name: str, text: str) -> tuple[float, float] | None:
    return None if text.lower() == "all" else _parse_band(text, name)


def _names(name: str, text: str) -> frozenset[str]:
    return frozenset(part.strip() for part in text.split(",") if part.strip())


def _parse_band(text: str, name: str) -> tuple[float, float]:
    text = text.strip()
    try:
        low, high = (float(part) for part in text.split(","))
    except ValueError:
        raise ValueError(f"{name} must be two numbers, low,high (as 0.3,0.7), not {text!r}.") from None
    return (low, high)


@dataclass(frozen=True, slots=True)
class Variable:
    """One COMPANION_* variable: the ReadSettings field it sets, how its text is read, what it does."""

    name: str
    field: str
    parse: Callable[[str, str], object]
    example: str  # the value the docs show (empty: any)
    effect: str  # what that value does, and the default


# Every variable ReadSettings.from_env reads, in the docs' order.
ENVIRONMENT: tuple[Variable, ...] = (
    Variable("COMPANION_MODELS", "models_dir", _path, "", "the models folder (default: the models the package ships)"),
    Variable("COMPANION_DETECTOR_VIEWS", "detector_views", _int, "",
             "mirror views of the detector's heatmap, 1..4 (default: the calibration's)"),
    Variable("COMPANION_MIRROR_BAND", "mirror_band", _band, "all",
             "takes the mirror views of the whole image (default: around peaks of the heat tuning.json's `mirror_band` "
             "holds)"),
    Variable("COMPANION_ZOOM", "zoom_small_faces", _switch, "0", "turns the second search of small dice off"),
    Variable("COMPANION_ZOOM_WORK", "zoom_within_work", _switch, "0",
             "a photo with no sharper copy is not searched again in its own pixels"),
    Variable("COMPANION_ZOOMED_VIEWS", "zoomed_views", _views_or_none, "N",
             "the second search's mirror views in a sharper copy (default: tuning.json's; 0: as many as the first)"),
    Variable("COMPANION_FAINT_HEAT", "faint_heat", _float, "",
             "heat that marks ground for the second search (default: tuning.json's; 0: the whole photo)"),
    Variable("COMPANION_READER_TURNS", "reader_turns", _int, "1",
             "turns the reader's vote over quarter turns off (default 4)"),
    Variable("COMPANION_READER_SURE", "reader_sure", _float, "1",
             "gives every crop all four turns (default: tuning.json's `reader_sure`: only unsure crops)"),
    Variable("COMPANION_READER_SURE_ONE", "reader_sure_one", _float, "1",
             "gives every crop two turns at least (default: tuning.json's `reader_sure_one`: only crops unsure "
             "upright)"),
    Variable("COMPANION_READER_CASCADE", "reader_cascade", _float, "1",
             "reads every crop with both of the reader's parts (default: tuning.json's `reader_cascade`: a crop the "
             "first reads surer, by it alone)"),
    Variable("COMPANION_BALANCE_LIGHT", "balance_light", _switch, "0",
             "reads the crops as they are under a light beyond the training's (default: corrected)"),
    Variable("COMPANION_JOINT_COLOUR", "joint_colour", _switch, "0",
             "judges each die's ink colour alone (default: a photo's dice together: on light bodies under the "
             "usual light split between the photo's own two inks of each pair, else by hue near each ink's usual)"),
    Variable("COMPANION_USUAL_LIGHT_JOINT", "usual_light_joint", _switch, "0",
             "under the usual light, leaves every die's colour to the reader (default: the photo's inks and the "
             "reader decide together, joint_colour.split_inks)"),
    Variable("COMPANION_LIGHT_COLOUR", "light_colour_head", _switch, "0",
             "reads every crop's colour with the reader's colour head (default: `models/light_colour.json`'s "
             "head for the photo's light, where it has one: corrected crops)"),
    Variable("COMPANION_DARK_FACE", "dark_face_threshold", _level_or_none, "",
             "the face probability a sure box needs on a photo of dark dice bodies (default: tuning.json's; `none`: the "
             "calibration's, as on every other photo; `0` keeps every sure box)"),
    Variable("COMPANION_FAINT_FACE", "faint_face_threshold", _level_or_none, "",
             "the face probability a face only the upright view finds needs (default: tuning.json's; `none`: such faces "
             "are not read)"),
    Variable("COMPANION_ONE_PER_CUBE", "one_per_cube", _switch, "0",
             "flags, instead of dropping, a box the cube model calls a second one on a cube"),
    Variable("COMPANION_MISSED_TOP_BANDS", "missed_top_bands", _bands, "all",
             "reads every weak peak beyond a kept box at every turn the vote gives it (default: tuning.json's "
             "`missed_top_bands`: a peak whose face probability lies outside the first band upright, or the "
             "second after two turns, is read no further)"),
    Variable("COMPANION_DISABLED_DOUBTS", "disabled_doubts", _names, "a,b",
             "switches the named decision flags off, for comparisons (companion/vision/doubts.py: `SWITCHABLE`; "
             "default: none)"),
)


def environment_table() -> str:
    """ENVIRONMENT as the Markdown table docs/vision.md shows."""
    rows = [f"| `{v.name}{'=' + v.example if v.example else ''}` | {v.effect} |" for v in ENVIRONMENT]
    return "\n".join(["| variable | what it changes |", "|---|---|", *rows])

