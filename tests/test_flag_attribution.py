"""training.flag_attribution names, per die, exactly the doubts that make the reading flag it
(the real ONNX models on the sample photos)."""

from pathlib import Path

import pytest

from companion.vision.image_io import load_work_image
from companion.vision.models import load_models
from companion.vision.pipeline import DEFAULT_SETTINGS, analyse, kept_boxes
from companion.vision.stage4_decide import decide_dice
from companion.vision.stage5_doubt import doubt_names
from companion.dice import standard_set
from training.common import read_dataset
from training.flag_attribution import Attribution, attribute

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


@pytest.mark.slow
def test_a_die_is_flagged_exactly_when_a_doubt_is_named_for_it_or_the_decoder_is_unsure():
    models = load_models()
    flagged = 0
    for image in read_dataset(SAMPLES):
        work = load_work_image(image.path)
        kept = kept_boxes(work, models, DEFAULT_SETTINGS, standard_set(), None, embeddings=False)
        if kept is None:  # a photo without dice
            continue
        decided = decide_dice(kept, models, DEFAULT_SETTINGS, standard_set())
        names = doubt_names(decided, models.tuning, DEFAULT_SETTINGS)
        readings = analyse(work, models, DEFAULT_SETTINGS).dice
        assert len(readings) == len(decided.decoded)
        for d, reading in zip(decided.decoded, readings):
            assert reading.uncertain == (bool(names[d.index]) or d.uncertain)
            flagged += reading.uncertain
    assert flagged > 0  # the samples hold flagged dice: the check above is not vacuous


@pytest.mark.slow
def test_the_attribution_counts_every_die_read_once_and_a_lone_doubt_once():
    models = load_models()
    a = Attribution()
    for image in read_dataset(SAMPLES):
        attribute(image, models, a)
    assert a.right + a.wrong > 0 and a.right_flagged <= a.right and a.wrong_flagged <= a.wrong
    assert sum(a.alone_right.values()) <= a.right_flagged and sum(a.alone_wrong.values()) <= a.wrong_flagged
    assert all(a.flags_right[name] >= n for name, n in a.alone_right.items())
    before = (a.alone_right["small_faces"], a.right_flagged, a.wrong, a.wrong_flagged)
    a.add(True, ["small_faces"])
    a.add(False, [])
    assert (a.alone_right["small_faces"], a.right_flagged, a.wrong, a.wrong_flagged) == (
        before[0] + 1, before[1] + 1, before[2] + 1, before[3])
