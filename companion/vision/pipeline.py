"""read_image: photo in, dice out. Load -> detect top faces -> read each crop -> decode with the
set -> flag what the scene says to check (a second box on a cube, an unusual light, a reading
the set cannot produce)."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from companion.dice import MAX_DICE, DiceSet, Face, standard_set
from companion.vision.crops import box_crop
from companion.vision.cubes import CubeDecision, decide, nearer_direction
from companion.vision.decoder import COLOR_CLASSES, VALUE_CLASSES, DecodedDie, color_index, decode, value_index
from companion.vision.detector import Detection, Heatmap
from companion.vision.doubts import PhotoContext, doubt_of, doubted_photo, raised, runner_up
from companion.vision.image_io import WorkImage, load_work_image
from companion.vision.inks import Ink, cast_of, dark_bodies, light_reference, measure_inks
from companion.vision.joint_colour import HUE_SPREAD, UNUSUAL_HUE_SPREAD, joint_colours, usual_light_colours
from companion.vision.light_colour import ink_features, photo_kind, possible_kinds
from companion.vision.models import Models, load_models
from companion.vision.profile import Profile
from companion.vision.reader import ReaderLogits, softmax
from companion.vision.reading import DieReading, Reading
from companion.vision.settings import ReadSettings
from companion.vision.stage1_find_faces import find_faces
from companion.vision.top_faces import candidates
from companion.vision.tuning import Tuning
from companion.vision.white_balance import (
    BALANCE_CAST, UNUSUAL_COLOUR_TEMPERATURE, LightCorrection, correction_of, light_correction,
)

DEFAULT_SETTINGS = ReadSettings()

# The photo's light, told by its light dice bodies (inks.light_cast): beyond UNUSUAL_CAST the
# light is more coloured than nearly all the training look's; the crops are then corrected
# towards the training light (white_balance.py) and the reader, still overconfident there, is
# trusted only from the tuning's unusual_light_sure (so is a photo whose light is untold).
UNUSUAL_CAST = BALANCE_CAST
# Boxes read beyond the set's 10 dice: the reader's face head may turn some down (a reader
# without that head keeps the 10 surest as before).
EXTRA_CANDIDATES = 4
@dataclass(frozen=True)
class Analysis:
    """Everything one reading computed, for evaluation and calibration (in detection order)."""

    detections: list[Detection]
    value_logits: np.ndarray  # (n, 11)
    color_logits: np.ndarray  # (n, 4)
    dice: list[DieReading]  # dice[i] belongs to detections[i]
    unusual_light: bool = False  # the crops were corrected for a light beyond the training look's


def _nothing() -> Analysis:
    return Analysis([], np.zeros((0, 11)), np.zeros((0, 4)), [])


def read_boxes(
    work: WorkImage, detections: list[Detection], models: Models, settings: ReadSettings = DEFAULT_SETTINGS,
    light: LightCorrection | None = None, cascade: bool = False, face_bands: tuple[tuple[float, float], ...] = (),
) -> ReaderLogits:
    """The reader's logits for each detected box's crop, corrected for the photo's light
    (`light`; None: measured here, photo_light); with `cascade`, the crops its first part is sure
    of read by it alone (ReadSettings.reader_cascade: then without embeddings); with `face_bands`,
    a read for the face head alone (ReaderModel.logits)."""
    return models.reader.logits(reader_crops(work, detections, models, settings, light), settings.reader_turns,
                                settings.reader_sure, settings.reader_sure_one,
                                settings.reader_cascade if cascade else 1.0, face_bands)


def needs_embedding(models: Models, settings: ReadSettings, light: LightCorrection) -> bool:
    """Could the crops' embeddings be asked for under this light: is there a colour head for a
    photo light it can be (the cast is told only after the reader)?"""
    heads = models.light_colour if settings.light_colour_head else None
    return heads is not None and any(heads.get(kind) is not None for kind in possible_kinds(light))


def reader_crops(
    work: WorkImage, detections: list[Detection], models: Models, settings: ReadSettings = DEFAULT_SETTINGS,
    light: LightCorrection | None = None,
) -> np.ndarray:
    """(n, size, size, 3) uint8: each box's crop as the reader is given it, corrected for the
    photo's light (`light`; None: measured here, photo_light)."""
    crops = np.stack([box_crop(work.rgb, d.box, models.reader.size) for d in detections])
    return (light or photo_light(work, detections, settings)).apply(crops)


def photo_light(work: WorkImage, detections: list[Detection], settings: ReadSettings = DEFAULT_SETTINGS) -> LightCorrection:
    """How the photo's light makes the crops differ from the training look's (white_balance.py)."""
    return light_correction(work.rgb, [d.box for d in detections]) if settings.balance_light else LightCorrection()


def analyse(
    work: WorkImage, models: Models, settings: ReadSettings = DEFAULT_SETTINGS, dice_set: DiceSet | None = None,
    profile: Profile | None = None,
) -> Analysis:
    dice_set = dice_set or standard_set()
    found = kept_boxes(work, models, settings, dice_set, profile, embeddings=False)
    if found is None:
        return _nothing()
    work, light, read, faces, keep, second = found.work, found.light, found.read, found.faces, found.keep, found.second
    cal = models.calibration
    detections = [found.detections[i] for i in keep]
    boxes = [d.box for d in detections]  # in the pixels of `work`, which the crops were cut from
    value_logits, color_logits = read.value[keep], read.color[keep]
    value_probs = softmax(value_logits, cal.value_temperature)
    cast = found.cast  # the photo's light, told by the kept dice's bodies (None: no white reference)
    embedding = None if read.embedding is None else read.embedding[keep]
    # the kept faces' inks, against their bodies where these are a white reference: measured
    # once, when first asked (the colour head, the joint colours and the ink doubts ask alike)
    inks = functools.cache(lambda: measure_inks(work.rgb, boxes, light=cast is not None))
    color_probs = _colour_probs(models, photo_kind(light, cast), color_logits, embedding, settings, inks)
    unbacked = np.zeros(len(detections), dtype=bool)
    if profile is not None:  # what this table's confirmed dice taught, before the set's constraint
        applied = profile.apply(embedding, value_probs, color_probs)
        value_probs, color_probs, unbacked = applied.value_probs, applied.color_probs, applied.unbacked
    decoded = decode(value_probs, color_probs, dice_set, settings.decoding)
    flags = _decision_flags(detections, faces[keep], value_probs, color_probs, decoded, cast, settings, models.tuning)
    flags["unbacked"] = unbacked  # the profile read it otherwise, and its guard could not back that
    if settings.joint_colour:
        decoded, flags, color_probs = _joint_decode(detections, faces[keep], value_probs, color_probs, decoded, flags,
                                                    cast, inks, dice_set, settings, models.tuning)
    flags["missed_tops"] = found.lone[keep]  # a side face read alone (kept_boxes: unless "missed_tops" is off)
    context = PhotoContext(work.rgb, detections, faces[keep], value_logits, color_logits, cal.color_temperature,
                           decoded, cast, _usual_light(cast), inks,
                           None if read.agree is None else read.agree[keep], second[keep],
                           np.array([d.score < models.tuning.detection_sure for d in detections], dtype=bool),
                           models.tuning.doubts)
    flags.update(raised(context, settings.disabled_doubts))
    if "doubted_photos" not in settings.disabled_doubts:  # many dice flagged: the photo's less sure ones too
        flags["doubted_photos"] = _doubted(_any(flags, len(detections)), decoded, models.tuning)
    dice = [_reading(work, detections[d.index], d, [name for name, f in flags.items() if f[d.index]],
                     value_probs[d.index], color_probs[d.index], dice_set) for d in decoded]
    return Analysis(detections, value_logits, color_logits, dice, light.unusual)


def _colour_probs(models: Models, light: str | None, color_logits: np.ndarray, embedding: np.ndarray | None,
                  settings: ReadSettings, inks: Callable[[], list[Ink]]) -> np.ndarray:
    """The colour probabilities of the dice read: from the colour head learnt for the photo's
    light (`light`: light_colour.photo_kind) where the models have one, else the reader's, less
    sure of crops corrected from a light beyond the training look's than of the training look's."""
    heads = models.light_colour if settings.light_colour_head else None
    head = None if heads is None else heads.get(light, models.reader.fingerprint)
    if head is not None and embedding is not None:
        features = ink_features(inks()) if head.inks else None
        return softmax(head.logits(embedding, color_logits, features), head.temperature)
    return softmax(color_logits, UNUSUAL_COLOUR_TEMPERATURE if light == "corrected" else models.calibration.color_temperature)


def _joint_decode(
    detections: list[Detection], faces: np.ndarray, value_probs: np.ndarray, color_probs: np.ndarray,
    alone: list[DecodedDie], alone_flags: dict[str, np.ndarray], cast: float | None, inks: Callable[[], list[Ink]],
    dice_set: DiceSet, settings: ReadSettings, tuning: Tuning,
) -> tuple[list[DecodedDie], dict[str, np.ndarray], np.ndarray]:
    """The dice decoded with the colours the photo's inks decide together (joint_colour.py), which
    to flag, and the colour probabilities decided on: whatever the reading of each die alone flags,
    every die the photo reads otherwise, and every die whose ink disputes the reader's colour (a
    change is never silent, and surer colours never hide a die's other doubts). Under the usual
    light the inks, measured on small faces, are less sure than the reader (on the tilted
    calibration set they moved more right colours than wrong): there they move only the dice
    the reader is unsure of."""
    usual = _usual_light(cast)
    if usual and not settings.usual_light_joint:
        return alone, alone_flags, color_probs
    # under the training look's light the reader alone is right nearly always: there the inks
    # move only the dice it is unsure of (joint_colour.usual_light_colours)
    # under a light beyond the training look's one ink's dice are measured farther apart (UNUSUAL_HUE_SPREAD)
    spread = UNUSUAL_HUE_SPREAD if cast is not None and cast > UNUSUAL_CAST else HUE_SPREAD
    joint = (usual_light_colours(color_probs, inks()) if usual
             else joint_colours(color_probs, inks(), spread=spread, dark=cast is None))
    if usual and not joint.moved.any() and np.array_equal(joint.probs, color_probs):
        return alone, alone_flags, color_probs
    decoded = decode(value_probs, joint.probs, dice_set, settings.decoding)
    # the set's constraint is still judged against what the reader itself saw
    flags = _merged(_decision_flags(detections, faces, value_probs, color_probs, decoded, cast, settings, tuning),
                    alone_flags)
    flags["decoder"] = flags["decoder"] | np.array([a.uncertain for a in alone], dtype=bool)
    flags["colour_moved"] = joint.moved | np.array([d.face != a.face for d, a in zip(decoded, alone)], dtype=bool)
    if "colour_disputes" not in settings.disabled_doubts:
        flags["colour_disputes"] = np.asarray(joint.disputed, dtype=bool)
    return decoded, flags, joint.probs


def _usual_light(cast: float | None) -> bool:
    """The photo has a white reference and its light is within the training look's (UNUSUAL_CAST)."""
    return cast is not None and cast <= UNUSUAL_CAST


@dataclass(frozen=True)
class KeptBoxes:
    """A photo's boxes up to the dice read from them (kept_boxes); per-box arrays are over
    `detections`, every box the reader read."""

    work: WorkImage  # the image the boxes are in (a sharper copy when small dice were searched again)
    detections: list[Detection]
    light: LightCorrection
    read: ReaderLogits
    faces: np.ndarray  # the face head's probability (1 for a reader without that head)
    keep: list[int]  # the boxes read as dice, surest first
    second: np.ndarray  # maybe a second box on a cube: to flag
    cast: float | None  # the light's cast told by the kept dice's bodies (inks.light_cast; None: no white reference)
    lone: np.ndarray  # maybe a cube's side face whose top face was missed (top_faces.py): to flag


def kept_boxes(
    work: WorkImage, models: Models, settings: ReadSettings = DEFAULT_SETTINGS, dice_set: DiceSet | None = None,
    profile: Profile | None = None, embeddings: bool = True,
) -> KeptBoxes | None:
    """Find a photo's faces, read them and keep those that are dice (None: none are), as analyse
    does before deciding the dice; training takes the same boxes from here. Without `embeddings`
    the reader's cascade reads the crops (read_boxes) where nothing of the read asks for them."""
    faces_found = find_faces(work, models, settings)
    seen, work, every_box, upright, faint = (faces_found.seen, faces_found.image, faces_found.boxes,
                                             faces_found.upright, faces_found.faint)
    detections = every_box[:MAX_DICE + EXTRA_CANDIDATES]  # the surest are read
    if not detections:
        return None
    light = photo_light(work, detections, settings)
    def cascade(light: LightCorrection) -> bool:  # may the crops be read without their embeddings?
        return not (embeddings or profile is not None or needs_embedding(models, settings, light))

    read = read_boxes(work, detections, models, settings, light, cascade(light))
    if profile is not None:
        profile.check_reader(models.reader.fingerprint)
    faces = read.face_probability()
    faces = np.ones(len(detections)) if faces is None else faces
    face_threshold = _face_threshold(work, detections, faces, models.calibration.face_threshold, settings,
                                     models.tuning.detection_sure)
    if faint and settings.faint_face_threshold is not None and read.face is not None:
        # the faces only the upright view found are read too, after the boxes the views agree on
        faint_read = read_boxes(work, faint, models, settings, light, cascade(light))
        detections, read = detections + faint, _joined(read, faint_read)
        faces = np.concatenate([faces, faint_read.face_probability()])
        face_threshold = np.concatenate([face_threshold, np.full(len(faint), settings.faint_face_threshold)])
        every_box = every_box + faint
    else:
        faint = []
    faint_box = np.arange(len(detections)) >= len(detections) - len(faint)
    # an unsure box unlike every die this table confirmed is none of its dice (profile.py)
    allowed = None if profile is None else profile.keeps(read.embedding, faces)
    dice_set = dice_set or standard_set()
    keep, second = _kept_boxes(detections, faces, face_threshold, settings, allowed,
                               lambda kept: _cubes(work, detections, faces, read, models, kept, dice_set,
                                                   faces < models.calibration.face_threshold, faint_box))
    if not keep:
        return None
    # the light was told by every box read, the photo's cast (analyse) by the dice kept: where
    # the two disagree on whether the light is beyond the training look's (a bright box that is
    # no die), the crops are read again as the kept dice's light says, so that the colour head,
    # the joint colours and the flags all judge one light
    reference = light_reference(work.rgb, [detections[i].box for i in keep])
    kept_light = correction_of(reference) if settings.balance_light else LightCorrection()
    if kept_light.unusual != light.unusual:
        light = kept_light
        read = read_boxes(work, detections, models, settings, light, cascade(light))
    lone = np.zeros(len(detections), dtype=bool)
    if "missed_tops" not in settings.disabled_doubts and read.face is not None:
        lone = _missed_tops(seen, upright, work, detections, every_box, keep, second, models, settings, light,
                            not embeddings)
    lone[faint_box] = True  # the mirror views doubt a faint face: flagged too
    return KeptBoxes(work, detections, light, read, faces, keep, second, None if reference is None else cast_of(reference),
                     lone)


def _joined(a: ReaderLogits, b: ReaderLogits) -> ReaderLogits:
    """Two reads' logits, one after the other (an output one of them lacks: None)."""
    def both(x: np.ndarray | None, y: np.ndarray | None) -> np.ndarray | None:
        return None if x is None or y is None else np.concatenate([x, y])

    return ReaderLogits(both(a.value, b.value), both(a.color, b.color), both(a.face, b.face),  # type: ignore[arg-type]
                        both(a.embedding, b.embedding), both(a.agree, b.agree))


def _face_threshold(
    work: WorkImage, detections: list[Detection], faces: np.ndarray, calibrated: float, settings: ReadSettings,
    detection_sure: float,
) -> np.ndarray:
    """Per box, the face probability it needs to be read as a die: the calibration's, or on a photo
    whose dice (the boxes that pass it, at least one) have dark bodies (inks.dark_bodies: told on
    the faces' discs, not their centres, which a bright numeral can fill),
    ReadSettings.dark_face_threshold for a box the detector is sure of (`detection_sure`: the
    unsure boxes the face head rates that low are mostly on a cube's side)."""
    out = np.full(len(detections), calibrated)
    dark = settings.dark_face_threshold
    if dark is None or dark >= calibrated:
        return out
    passing = [d.box for d, f in zip(detections, faces) if f >= calibrated]
    if not dark_bodies(work.rgb, passing):  # no dice to tell, or light ones
        return out
    out[[d.score >= detection_sure for d in detections]] = dark
    return out


def _missed_tops(
    seen: WorkImage, upright: Heatmap, work: WorkImage, detections: list[Detection], every_box: list[Detection],
    keep: list[int], flagged: np.ndarray, models: Models, settings: ReadSettings, light: LightCorrection,
    cascade: bool,
) -> np.ndarray:
    """Per box of `detections` (those read): a kept box beyond which, away from the camera, the
    upright heatmap of `seen` (the working image) has a peak that no box found marks (`every_box`,
    the boxes beyond those read too) and that the reader's face head takes for a top face (as sure
    as it must be of a box kept as a die under the calibration's threshold): the kept box is
    probably that cube's side face (top_faces.py). A box already `flagged` is not looked beyond (the
    reader's second look costs a run of its own; `cascade`: read by the reader's cascade, only the
    face head is asked)."""
    out = np.zeros(len(detections), dtype=bool)
    to_seen = seen.rgb.shape[1] / work.rgb.shape[1]  # the boxes' image (maybe a sharper copy) -> seen's pixels
    kept = [_scaled(detections[i], to_seen) for i in keep]
    others = [_scaled(d, to_seen) for d in every_box]
    found = [(k, c) for k, c in candidates(upright, models.detector.stride, kept, others, nearer_direction(kept))
             if not flagged[keep[k]]]
    if not found:
        return out
    peaks = list(dict.fromkeys(c for _, c in found))  # a peak beyond two kept boxes is read once
    # read at the turns any box is (upright only, more boxes there that are no top face pass the face
    # head), but only the face head is asked: a peak it reads far from a top face, or sure of one,
    # after a stage of the vote is read no further (ReadSettings.missed_top_bands)
    read = read_boxes(work, [_scaled(c, 1 / to_seen) for c in peaks], models, settings, light, cascade,
                      settings.missed_top_bands)
    faces = read.face_probability()
    if faces is None:
        return out
    # a face the face head would keep as a die's top face, had the detector boxed it
    sure = dict(zip(peaks, (faces >= models.calibration.face_threshold).tolist()))
    for k, c in found:
        out[keep[k]] |= bool(sure[c])
    return out


def _scaled(d: Detection, by: float) -> Detection:
    return Detection((d.box[0] * by, d.box[1] * by, d.box[2] * by, d.box[3] * by), d.score)


def _kept_boxes(
    detections: list[Detection], faces: np.ndarray, face_threshold: float | np.ndarray, settings: ReadSettings,
    allowed: np.ndarray | None = None, cubes: Callable[[list[int]], CubeDecision] | None = None,
) -> tuple[list[int], np.ndarray]:
    """The boxes read as dice (surest first) and, per box, whether to flag it as maybe a
    cube's side face (cubes.py: one the cube model drops with settings.one_per_cube, when its
    cube's other box is read, is flagged instead without it). `allowed` (None: all): the boxes
    a dice-set profile does not turn down."""
    passes = np.asarray(faces) >= face_threshold  # one threshold, or one per box (_face_threshold)
    keep = [i for i in range(len(detections)) if passes[i] and (allowed is None or allowed[i])]
    cube = cubes(keep) if cubes is not None else decide(None, [detections[i] for i in keep], faces[keep], None)
    second = np.zeros(len(detections), dtype=bool)
    flag = cube.check if settings.one_per_cube else cube.check | cube.drop
    second[[keep[k] for k in np.flatnonzero(flag)]] = True
    if settings.one_per_cube:
        keep = [i for k, i in enumerate(keep) if not cube.drop[k]]
    # more boxes than dice in the set: the weakest cannot all be dice; keep the 10 surest
    return keep[:MAX_DICE], second


def _cubes(work: WorkImage, detections: list[Detection], faces: np.ndarray, read: ReaderLogits, models: Models,
           kept: list[int], dice_set: DiceSet, lowered: np.ndarray, faint: np.ndarray) -> CubeDecision:
    """The cube model's decision on the kept boxes (cubes.py); `lowered`, per box: under the
    calibration's face threshold (a kept one passed only a lowered one, _face_threshold); `faint`,
    per box: found by the upright view alone (faint_faces)."""
    cal = models.calibration
    value = softmax(read.value[kept], cal.value_temperature)
    colour = softmax(read.color[kept], cal.color_temperature)
    return decide(work.rgb, [detections[i] for i in kept], faces[kept], models.cubes, value, colour, dice_set,
                  lowered[kept], faint[kept])


def _decision_flags(
    detections: list[Detection], faces: np.ndarray, value_probs: np.ndarray, color_probs: np.ndarray,
    decoded: list[DecodedDie], cast: float | None, settings: ReadSettings, tuning: Tuning,
) -> dict[str, np.ndarray]:
    """Per doubt raised where the dice are decided (doubts.DECISION_DOUBTS), the boxes it flags
    beyond the decoder's own confidence: a box the detector or the face head is unsure of, a die
    under a light the reader is trusted less in, and a die the set's constraint read otherwise
    than the reader saw it (the set cannot produce what it saw: something was misread)."""
    n = len(detections)
    off = settings.disabled_doubts
    flags = {"decoder": np.zeros(n, dtype=bool),
             "weak_box": np.array([d.score < tuning.detection_sure for d in detections], dtype=bool)
             | (faces < tuning.face_sure)}
    # a light beyond the training look: the reader's confidences are worth less (see UNUSUAL_CAST);
    # so under a light no white reference tells (dark bodies), which may be as far beyond it
    light = "unusual_light" if cast is not None and cast > UNUSUAL_CAST else "unknown_light" if cast is None else ""
    if light and light not in off:
        flags[light] = np.zeros(n, dtype=bool)
        flags[light][[d.index for d in decoded]] = [d.confidence < tuning.unusual_light_sure for d in decoded]
    if "set_changes" not in off:
        flags["set_changes"] = np.zeros(n, dtype=bool)
        for d in decoded:
            # what the reader saw on the face, before the set had its say
            seen = Face(VALUE_CLASSES[int(value_probs[d.index].argmax())],
                        COLOR_CLASSES[int(color_probs[d.index].argmax())])
            flags["set_changes"][d.index] = d.face != seen
    return flags


def _any(flags: dict[str, np.ndarray], n: int) -> np.ndarray:
    out = np.zeros(n, dtype=bool)
    for flagged in flags.values():
        out |= flagged
    return out


def _merged(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Two sets of named flags over the same boxes, each name's flags joined."""
    n = len(next(iter(a.values())))
    return {name: a.get(name, np.zeros(n, dtype=bool)) | b.get(name, np.zeros(n, dtype=bool)) for name in {**a, **b}}


def _doubted(unsure: np.ndarray, decoded: list[DecodedDie], tuning: Tuning) -> np.ndarray:
    """doubts.doubted_photo over the dice read, each flagged for `unsure` or the decoder's own
    doubt (a box no die was decoded from is left as it is)."""
    index = [d.index for d in decoded]
    flagged = unsure[index] | np.array([d.uncertain for d in decoded], dtype=bool)
    out = np.zeros(len(unsure), dtype=bool)
    out[index] = doubted_photo(flagged, np.array([d.confidence for d in decoded]), tuning.doubts)
    return out


def read_work_image(
    work: WorkImage, models: Models, settings: ReadSettings = DEFAULT_SETTINGS, dice_set: DiceSet | None = None,
    profile: Profile | None = None,
) -> list[DieReading]:
    """Read the dice of an already loaded photo (boxes in full-size upright pixels)."""
    readings = analyse(work, models, settings, dice_set, profile).dice
    # reading order: top to bottom, then left to right, by rows of about one die's height
    return sorted(readings, key=lambda r: (round(r.box[1] / max(r.box[3] - r.box[1], 1)), r.box[0]))


def _reading(work: WorkImage, det: Detection, d: DecodedDie, doubts: list[str], value_probs: np.ndarray,
             color_probs: np.ndarray, dice_set: DiceSet) -> DieReading:
    """One decoded die; flagged when the decoder is unsure of its face or any of `doubts` (the names
    of those raised about it) holds, with what is doubted and the runner-up face then."""
    uncertain = d.uncertain or bool(doubts)
    if not uncertain:
        return DieReading(d.face.value, d.face.color, d.confidence, work.to_full(det.box), d.die)
    doubt = doubt_of(doubts, float(value_probs[value_index(d.face.value)]), float(color_probs[color_index(d.face.color)]))
    return DieReading(d.face.value, d.face.color, d.confidence, work.to_full(det.box), d.die, uncertain=True,
                      doubt=doubt, runner_up=runner_up(value_probs, color_probs, d.face, dice_set))


def read_image(
    source: bytes | str | os.PathLike, models: Models | None = None, settings: ReadSettings = DEFAULT_SETTINGS,
    profile: Profile | None = None,
) -> Reading:
    """Read every die in a photo (JPEG, PNG or WebP; bytes or a path).

    `models` None loads (once per process) those of settings.models_dir. `profile`: what
    this table's confirmed photos taught about its dice (companion/vision/profile.py; None:
    the base reader alone). Raises ImageError for data that is not an image, is broken, or
    is too large to decode safely, ModelsMissing when the model files are not there, and
    ProfileError for a profile learnt with another reader; a photo without dice gives a
    Reading with an empty list.
    """
    start = time.perf_counter()
    work = load_work_image(source)  # bad input fails before the models are even loaded
    models = models or load_models(settings.models_dir, settings.providers)
    dice = read_work_image(work, models, settings, profile=profile)
    ms = (time.perf_counter() - start) * 1000
    return Reading(work.full_width, work.full_height, dice, ms)
