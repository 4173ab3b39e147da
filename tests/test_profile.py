"""companion.vision.profile: learning a set's dice, undoing a photo, the guard, the file.

Pure numpy: the dice are points in a small embedding space (one cluster per face, as the
reader's embedding of one set's face under one light), and the "base reader" is given
probabilities with the mistakes an unseen look causes (its red read as orange).
"""

import io
import json
import zipfile

import numpy as np
import pytest

from companion.dice import Color
from companion.vision import profile as profile_mod
from companion.vision.decoder import color_index
from companion.vision.profile import MIN_PHOTOS, N_COLORS, N_VALUES, Profile, ProfileError

DIM = 32
READER = "reader-a"
RED, ORANGE = color_index(Color.RED), color_index(Color.ORANGE)
# (value class, colour class) of the faces the test's set shows
FACES = [(v, c) for v, c in [(0, RED), (1, ORANGE), (2, RED), (3, ORANGE), (4, 2), (5, 3), (6, RED), (7, 2),
                              (8, 3), (9, ORANGE), (10, RED), (2, 3)]]


class TableSet:
    """One dice set under one light: each face's crops scatter around the face's own centre."""

    def __init__(self, seed: int = 0, spread: float = 0.25):
        self.rng = np.random.default_rng(seed)
        self.centres = _unit(self.rng.normal(size=(len(FACES), DIM)))
        self.spread = spread

    def photo(self, n: int = 8):
        faces = self.rng.integers(len(FACES), size=n)
        emb = _unit(self.centres[faces] + self.spread * self.rng.normal(size=(n, DIM)) / np.sqrt(DIM))
        values = np.array([FACES[f][0] for f in faces])
        colors = np.array([FACES[f][1] for f in faces])
        return emb, values, colors, self.base_value(values), self.base_color(colors)

    def base_value(self, values):
        """Right, at 0.8; but the value-6 face (class 5) it takes for 9 (class 8)."""
        p = np.full((len(values), N_VALUES), 0.2 / (N_VALUES - 1))
        p[np.arange(len(values)), values] = 0.8
        six = values == 5
        p[six] = 0.04 / (N_VALUES - 2)
        p[six, 8], p[six, 5] = 0.6, 0.36
        return p

    def base_color(self, colors):
        """This set's red ink reads as orange (0.6 against 0.35); the other inks right."""
        p = np.full((len(colors), N_COLORS), 0.05)
        p[np.arange(len(colors)), colors] = 0.85
        red = colors == RED
        p[red] = 0.025
        p[red, ORANGE], p[red, RED] = 0.6, 0.35
        return p


def _unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _learnt(table: TableSet, photos: int = 4) -> Profile:
    prof = Profile.empty(READER, DIM)
    for k in range(photos):
        prof = prof.add(f"photo {k}", *table.photo())
    return prof


def _errors(prof: Profile | None, emb, values, colors, bv, bc) -> int:
    if prof is not None:
        bv, bc = prof.adjust(emb, bv, bc)
    return int((bv.argmax(1) != values).sum() + (bc.argmax(1) != colors).sum())


def test_learnt_dice_fix_the_base_readers_mistakes_on_new_photos():
    table = TableSet(seed=1)
    prof = _learnt(table)
    assert len(prof) == 32 and prof.photos == tuple(f"photo {k}" for k in range(4))
    assert prof.blend.active
    base = learnt = 0
    for _ in range(10):
        shot = table.photo()
        base += _errors(None, *shot)
        learnt += _errors(prof, *shot)
    assert base > 20  # every red die and every 6 is wrong without the profile
    assert learnt <= base // 4


def test_a_crop_like_nothing_learnt_keeps_the_base_readers_answer():
    table = TableSet(seed=2)
    prof = _learnt(table)
    stranger = _unit(np.random.default_rng(9).normal(size=(3, DIM)))
    pv = np.tile(np.eye(N_VALUES)[7] * 0.9 + 0.1 / N_VALUES, (3, 1))
    pc = np.tile(np.array([0.1, 0.1, 0.7, 0.1]), (3, 1))
    got_v, got_c = prof.adjust(stranger, pv, pc)
    np.testing.assert_array_equal(got_c, pc)  # a sure green: the inks' looks agree
    np.testing.assert_array_equal(got_v, pv)


def test_undoing_a_photo_takes_its_dice_out_again():
    table = TableSet(seed=3)
    before = _learnt(table)
    after = before.add("photo 9", *table.photo(6)).remove("photo 9")
    assert len(after) == len(before) and after.photos == before.photos
    for name in ("values", "colors", "photo", "base_value", "base_color"):
        np.testing.assert_array_equal(getattr(after, name), getattr(before, name))
    np.testing.assert_allclose(after.embeddings, before.embeddings, atol=1e-6)
    np.testing.assert_array_equal(after.blend.value.backed, before.blend.value.backed)
    np.testing.assert_array_equal(after.blend.color.backed, before.blend.color.backed)
    # undoing a photo in the middle keeps the others' dice, and their photos' names
    middle = before.remove("photo 1")
    assert middle.photos == ("photo 0", "photo 2", "photo 3") and len(middle) == 24
    np.testing.assert_allclose(middle.embeddings[8:], before.embeddings[16:], atol=1e-6)
    assert before.remove("never learnt") is before


def test_learning_a_photo_again_replaces_its_dice():
    table = TableSet(seed=4)
    prof = _learnt(table)
    shot = table.photo(3)
    again = prof.add("photo 2", *shot)
    assert len(again) == len(prof) - 8 + 3
    assert again.photos[-1] == "photo 2"
    np.testing.assert_allclose(again.embeddings[-3:], shot[0], atol=1e-6)


def _right(values, colors, level: float = 0.8):
    """A base reader that is right, at `level`."""
    pv = np.eye(N_VALUES)[values] * (level - (1 - level) / (N_VALUES - 1)) + (1 - level) / (N_VALUES - 1)
    pc = np.eye(N_COLORS)[colors] * (level - (1 - level) / (N_COLORS - 1)) + (1 - level) / (N_COLORS - 1)
    return pv, pc


def test_the_guard_keeps_the_base_reader_when_the_crops_teach_nothing():
    """Embeddings that say nothing about the face (noise) and a base reader right on every
    die: the check sees nothing to fix, so nothing is backed and the answers stay as they are."""
    rng = np.random.default_rng(5)
    table = TableSet(seed=5)
    prof = Profile.empty(READER, DIM)
    for k in range(6):
        _, values, colors, _, _ = table.photo()
        prof = prof.add(f"photo {k}", _unit(rng.normal(size=(8, DIM))), values, colors, *_right(values, colors))
    assert not prof.blend.value.backed.any() and not prof.blend.color.backed.any()
    shot = table.photo()
    got = prof.apply(shot[0], shot[3], shot[4])
    np.testing.assert_array_equal(got.value_probs, shot[3])
    np.testing.assert_array_equal(got.color_probs, shot[4])
    assert not got.unbacked.any()


def test_a_change_the_guard_cannot_back_is_flagged_and_not_applied():
    """A 6 and a 9 that the embedding cannot tell apart, the 9 learnt three times as often:
    the learnt dice would read every 6 as a 9, which the photos checked in turn show. A new 6
    keeps the base reader's answer, flagged."""
    rng = np.random.default_rng(6)
    centre = _unit(rng.normal(size=(1, DIM)))
    prof = Profile.empty(READER, DIM)
    for k in range(4):
        values = np.array([5, 8, 8, 8])  # classes of 6 and 9
        colors = np.full(4, 3)
        emb = _unit(centre + 0.05 * rng.normal(size=(4, DIM)) / np.sqrt(DIM))
        prof = prof.add(f"photo {k}", emb, values, colors, *_right(values, colors, 0.7))
    assert prof.blend.value.breaks[5, 8] > 0 and not prof.blend.value.backed[5, 8]
    pv, pc = _right(np.array([5]), np.array([3]), 0.7)
    got = prof.apply(_unit(centre), pv, pc)
    assert got.value_probs.argmax() == 5 and got.unbacked.tolist() == [True]
    np.testing.assert_array_equal(got.value_probs, pv)


def test_a_fonts_misread_numeral_is_learnt_for_faces_not_learnt_yet():
    """This set's 6 is read as a 9 on every die (TableSet.base_value), and the embeddings say
    nothing the kernel could use (noise): the value head's shift, fitted to every learnt die,
    still reads a new 6 as a 6, and leaves a plain 9 a 9."""
    rng = np.random.default_rng(15)
    table = TableSet(seed=15)
    prof = Profile.empty(READER, DIM)
    for k in range(6):
        _, values, colors, _, _ = table.photo()
        values = np.where(np.arange(len(values)) % 2 == 0, 5, values)  # a 6 in every other die
        prof = prof.add(f"photo {k}", _unit(rng.normal(size=(8, DIM))), values, colors, table.base_value(values),
                        _right(values, colors)[1])
    assert prof.blend.value.backed[8, 5] and prof.blend.value_errors[0] > 0 == prof.blend.value_errors[1]
    stranger = _unit(rng.normal(size=(2, DIM)))
    values = np.array([5, 8])  # a 6 and a 9 of dice never learnt
    got, _ = prof.adjust(stranger, table.base_value(values), _right(values, np.array([3, 3]))[1])
    assert got.argmax(axis=1).tolist() == [5, 8]


def test_a_value_change_that_fixes_no_checked_die_is_not_used():
    """The base reader right on every learnt die, most of them 10s: nothing the check saw was
    fixed, so a 10 the base reader reads at 0.55 (W at 0.4) stays a 10."""
    rng = np.random.default_rng(18)
    prof = Profile.empty(READER, DIM)
    for k in range(5):
        values = np.array([10, 10, 10, 10, 10, 10, 3, 7])
        colors = rng.integers(N_COLORS, size=8)
        prof = prof.add(f"photo {k}", _unit(rng.normal(size=(8, DIM))), values, colors, *_right(values, colors, 0.7))
    assert prof.blend.value_errors == (0, 0) and not prof.blend.value.backed.any()
    ten = np.full((1, N_VALUES), 0.05 / (N_VALUES - 2))
    ten[0, 9], ten[0, 10] = 0.55, 0.4
    got, _ = prof.adjust(_unit(rng.normal(size=(1, DIM))), ten, np.full((1, N_COLORS), 0.25))
    assert got.argmax() == 9


def test_the_guard_keeps_the_base_reader_where_it_is_already_right():
    table = TableSet(seed=6)
    prof = Profile.empty(READER, DIM)
    for k in range(5):
        emb, values, colors, _, _ = table.photo()
        sure_v = np.eye(N_VALUES)[values] * 0.999 + 0.001 / N_VALUES
        sure_c = np.eye(N_COLORS)[colors] * 0.999 + 0.001 / N_COLORS
        prof = prof.add(f"photo {k}", emb, values, colors, sure_v, sure_c)
    assert prof.blend.value_errors == (0, 0) and prof.blend.color_errors == (0, 0)


def test_a_colour_moves_only_on_dice_of_that_ink_never_on_neighbours_of_the_same_value():
    """Many red 5s learnt, whose crops look alike (the glyph); a blue 5 looks like them too
    (cosine 0.95), and the base reader reads it blue. Its colour stays blue: the red dice are
    evidence about red ink, not about this crop's ink."""
    rng = np.random.default_rng(21)
    five = _unit(rng.normal(size=(1, DIM)))
    others = _unit(rng.normal(size=(6, DIM)))
    prof = Profile.empty(READER, DIM)
    for k in range(4):
        emb = np.concatenate([_unit(five + 0.1 * rng.normal(size=(4, DIM)) / np.sqrt(DIM)), others[[k, k + 1]]])
        values, colors = np.array([4, 4, 4, 4, 1, 7]), np.array([RED, RED, RED, RED, 2, 3])
        pv, pc = _right(values, colors, 0.8)
        pc[:4] = [0.35, 0.6, 0.025, 0.025]  # this set's red reads orange
        prof = prof.add(f"photo {k}", emb, values, colors, pv, pc)
    blue_five = _unit(five + 0.2 * rng.normal(size=(1, DIM)) / np.sqrt(DIM))
    assert float((blue_five @ prof.embeddings.T).max()) > 0.9
    pv, pc = _right(np.array([4]), np.array([3]), 0.7)
    got = prof.apply(blue_five, pv, pc)
    assert got.color_probs.argmax() == 3 and not got.unbacked.any()
    # and a red 5 read orange, as the learnt ones were, is read red
    red = prof.apply(blue_five, pv, np.array([[0.35, 0.6, 0.025, 0.025]]))
    assert red.color_probs.argmax() == RED


def test_a_reading_is_never_both_changed_without_backing_and_surer():
    """Whatever was learnt, each die's probabilities are the base reader's, or its answer
    changed in a way the check backed."""
    table = TableSet(seed=22)
    prof = _learnt(table, photos=5)
    for _ in range(5):
        emb, values, colors, bv, bc = table.photo()
        got = prof.apply(emb, bv, bc)
        for head, base, new, check in (("value", bv, got.value_probs, prof.blend.value),
                                       ("colour", bc, got.color_probs, prof.blend.color)):
            same = np.all(new == base, axis=1)
            b, a = base.argmax(axis=1), new.argmax(axis=1)
            assert np.all(same | ((a != b) & check.backed[b, a])), head


def test_a_wrong_die_nobody_checked_does_not_teach_against_checked_dice():
    """Photo 1: the set's red dice were read orange and confirmed unchecked (the reader's own
    guess). Later photos: red dice of the same look, checked and put right. The unchecked
    oranges are contradicted and teach nothing: a new red die reads red."""
    rng = np.random.default_rng(23)
    red_look = _unit(rng.normal(size=(1, DIM)))
    orange_look = _unit(rng.normal(size=(1, DIM)))

    def dice(look, n):
        return _unit(look + 0.05 * rng.normal(size=(n, DIM)) / np.sqrt(DIM))

    red_pc = np.tile([0.35, 0.6, 0.025, 0.025], (4, 1))
    orange_pc = np.tile([0.1, 0.85, 0.025, 0.025], (4, 1))
    pv = _right(np.full(4, 2), np.zeros(4, int))[0]
    prof = Profile.empty(READER, DIM).add("photo 0", dice(red_look, 4), np.full(4, 2), np.full(4, ORANGE), pv,
                                          red_pc, checked=[False] * 4)
    for k in range(1, 4):
        emb = np.concatenate([dice(red_look, 4), dice(orange_look, 4)])
        prof = prof.add(f"photo {k}", emb, np.full(8, 2), [RED] * 4 + [ORANGE] * 4, np.concatenate([pv, pv]),
                        np.concatenate([red_pc, orange_pc]))
    assert prof.checked.tolist() == [False] * 4 + [True] * 24
    assert profile_mod._teaching(prof._rows()).tolist() == [False] * 4 + [True] * 24
    got = prof.apply(dice(red_look, 1), pv[:1], red_pc[:1])
    assert got.color_probs.argmax() == RED and not got.unbacked.any()
    orange = prof.apply(dice(orange_look, 1), pv[:1], orange_pc[:1])
    assert orange.color_probs.argmax() == ORANGE


def test_what_was_learnt_is_told_per_ink_and_per_value():
    table = TableSet(seed=24)
    prof = _learnt(table, photos=5)
    items = prof.learnt()
    inks = {i.name: i for i in items if i.kind == "ink"}
    assert sum(i.dice for i in inks.values()) == len(prof) == sum(i.dice for i in items if i.kind == "value")
    assert inks["red"].in_use  # red read orange: fixed, and backed
    assert inks["red"].checked == inks["red"].dice
    assert "red: learnt from" in inks["red"].sentence()


def test_with_one_photo_nothing_can_be_kept_aside_and_the_base_reader_reads():
    assert MIN_PHOTOS == 2
    table = TableSet(seed=7)
    prof = Profile.empty(READER, DIM).add("photo 0", *table.photo(10))
    assert not prof.blend.active and prof.blend.checked == 0
    shot = table.photo()
    got = prof.adjust(shot[0], shot[3], shot[4])
    np.testing.assert_array_equal(got[0], shot[3])


def test_the_oldest_photos_go_when_the_profile_is_full(monkeypatch):
    monkeypatch.setattr(profile_mod, "MAX_DICE", 20)
    table = TableSet(seed=8)
    prof = _learnt(table, photos=4)  # 32 dice: the first two photos must go
    assert len(prof) <= 20 and prof.photos == ("photo 2", "photo 3")


def test_the_file_gives_back_the_same_profile():
    prof = _learnt(TableSet(seed=10))
    back = Profile.from_bytes(prof.to_bytes())
    assert back.photos == prof.photos and back.reader == READER and len(back) == len(prof)
    np.testing.assert_array_equal(back.values, prof.values)
    np.testing.assert_array_equal(back.checked, prof.checked)
    np.testing.assert_allclose(back.embeddings, prof.embeddings, atol=2e-3)  # float16 in the file
    shot = TableSet(seed=10).photo()
    for a, b in zip(back.adjust(shot[0], shot[3], shot[4]), prof.adjust(shot[0], shot[3], shot[4])):
        np.testing.assert_allclose(a, b, atol=0.02)


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _header(**kw) -> np.ndarray:
    head = {"format": "phase10-dice-profile", "version": 1, "reader": READER, "dim": DIM, "photos": ["a"], **kw}
    return np.frombuffer(json.dumps(head).encode(), np.uint8)


@pytest.mark.parametrize("data, message", [
    (b"", "not a dice profile"),
    (b"hello, this is not a profile", "not a dice profile"),
    (b"PK\x03\x04" + b"\x00" * 40, "not a dice profile"),
    (_npz(header=np.frombuffer(b'{"format": "other"}', np.uint8)), "not a dice profile"),
    (_npz(header=_header(version=99)), "version 99"),
    (_npz(header=_header()), "damaged"),
    (_npz(header=_header(), embeddings=np.ones((2, DIM), np.float16) / np.sqrt(DIM), values=np.zeros(3, np.int8),
          colors=np.zeros(2, np.int8), photo=np.zeros(2, np.int32), base_value=np.zeros((2, N_VALUES)),
          base_color=np.zeros((2, N_COLORS)), base_face=np.ones(2)), "damaged"),
    (_npz(header=_header(), embeddings=np.ones((2, DIM), np.float16) / np.sqrt(DIM), values=np.array([0, 11]),
          colors=np.zeros(2, np.int8), photo=np.zeros(2, np.int32), base_value=np.zeros((2, N_VALUES)),
          base_color=np.zeros((2, N_COLORS)), base_face=np.ones(2)), "value"),
    (_npz(header=_header(), embeddings=np.ones((2, DIM), np.float16) / np.sqrt(DIM), values=np.zeros(2),
          colors=np.zeros(2, np.int8), photo=np.array([0, 5]), base_value=np.zeros((2, N_VALUES)),
          base_color=np.zeros((2, N_COLORS)), base_face=np.ones(2)), "damaged"),
])
def test_a_file_that_is_not_a_good_profile_is_refused_with_a_sentence(data, message):
    with pytest.raises(ProfileError, match=message) as exc:
        Profile.from_bytes(data, "p.profile")
    assert "p.profile" in str(exc.value) or "version" in str(exc.value)


def test_a_version_1_file_is_read_with_every_die_unchecked():
    prof = _learnt(TableSet(seed=19))
    with np.load(io.BytesIO(prof.to_bytes())) as npz:
        arrays = {k: npz[k] for k in npz.files if k != "checked"}
    head = json.loads(bytes(arrays.pop("header")).decode())
    back = Profile.from_bytes(_npz(header=np.frombuffer(json.dumps({**head, "version": 1}).encode(), np.uint8),
                                   **arrays))
    assert len(back) == len(prof) and not back.checked.any()


def test_a_cut_off_profile_file_is_refused():
    data = _learnt(TableSet(seed=11)).to_bytes()
    with pytest.raises(ProfileError):
        Profile.from_bytes(data[: len(data) // 2])
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert "header.npy" in z.namelist()  # a plain .npz: no pickles


def test_a_profile_file_with_damaged_compressed_arrays_is_refused_with_a_sentence():
    # bytes flipped inside the first array's compressed stream: zlib's own error, not a crash
    data = bytearray(_learnt(TableSet(seed=12)).to_bytes())
    start = len(data) // 40
    for k in range(start, start + 64):
        data[k] ^= 0xFF
    with pytest.raises(ProfileError, match="not a dice profile file"):
        Profile.from_bytes(bytes(data), "p.profile")


def test_a_profile_of_another_reader_is_refused():
    prof = _learnt(TableSet(seed=12))
    prof.check_reader(READER)
    with pytest.raises(ProfileError, match="another reader"):
        prof.check_reader("reader-b")


def test_bad_learnt_dice_are_refused():
    prof = Profile.empty(READER, DIM)
    emb = _unit(np.ones((1, DIM)))
    with pytest.raises(ProfileError, match="colour"):
        prof.add("x", emb, [0], [4], np.full((1, N_VALUES), 0.1), np.full((1, N_COLORS), 0.25))
    with pytest.raises(ProfileError, match="length 1"):
        prof.add("x", 2 * emb, [0], [0], np.full((1, N_VALUES), 0.1), np.full((1, N_COLORS), 0.25))


def test_an_unsure_box_unlike_every_learnt_die_is_dropped_and_the_others_kept():
    table = TableSet(seed=13)
    prof = _learnt(table)  # 32 dice, every one a sure face
    assert prof.blend.drop_unlike
    like = table.photo(2)[0]
    stranger = _unit(np.random.default_rng(1).normal(size=(2, DIM)))
    emb = np.concatenate([like, stranger])
    keeps = prof.keeps(emb, np.array([0.55, 0.99, 0.55, 0.99]))
    assert keeps.tolist() == [True, True, False, True]
    assert prof.keeps(emb, None) is None  # a reader without a face head: nothing is judged


def test_a_box_half_like_the_set_that_the_face_head_doubts_is_dropped():
    """A box the face head gives 0.6 whose nearest learnt die is at cosine 0.7 (a die's side
    face, another game's die): not one of this set's top faces. A sure box like it is kept."""
    table = TableSet(seed=16)
    prof = _learnt(table)
    assert prof.blend.drop_unlike
    rng = np.random.default_rng(3)
    away = rng.normal(size=DIM)
    away -= (away @ prof.embeddings[0]) * prof.embeddings[0]
    half = _unit((0.7 * prof.embeddings[0] + np.sqrt(1 - 0.49) * away / np.linalg.norm(away))[None])
    nearest = float((half @ prof.embeddings.T).max())
    assert 0.65 < nearest < 0.75
    like = table.photo(1)[0]
    keeps = prof.keeps(np.concatenate([half, half, like]), np.array([0.6, 0.99, 0.6]))
    assert keeps.tolist() == [False, True, True]


def test_two_photos_of_eight_dice_are_enough_to_drop_boxes_unlike_the_set():
    """Sixteen learnt dice (two photos of a full roll's worth): the rule is checked and used."""
    table = TableSet(seed=17)
    prof = Profile.empty(READER, DIM)
    for k in range(2):
        prof = prof.add(f"photo {k}", *table.photo(8))
    assert len(prof) == 16 and prof.blend.drop_unlike
    stranger = _unit(np.random.default_rng(4).normal(size=(1, DIM)))
    assert prof.keeps(stranger, np.array([0.6])).tolist() == [False]


def test_boxes_are_not_dropped_before_enough_dice_are_learnt_or_if_a_learnt_die_would_be():
    table = TableSet(seed=14)
    few = Profile.empty(READER, DIM)
    for k in range(2):
        few = few.add(f"photo {k}", *table.photo(5))
    assert len(few) < profile_mod.DROP_AFTER and not few.blend.drop_unlike
    # a confirmed die the face head was unsure of, unlike the dice of the other photos:
    # the rule would have dropped it, so it is not used
    prof = _learnt(table)
    odd = _unit(np.random.default_rng(2).normal(size=(1, DIM)))
    prof = prof.add("odd photo", odd, [3], [2], np.full((1, N_VALUES), 1 / N_VALUES), np.full((1, N_COLORS), 0.25),
                    np.array([0.5]))
    assert not prof.blend.drop_unlike
    assert prof.keeps(odd, np.array([0.5])) is None


def _same_check(a: Profile, b: Profile) -> None:
    for x, y in ((a.blend.value, b.blend.value), (a.blend.color, b.blend.color)):
        np.testing.assert_array_equal(x.fixes, y.fixes)
        np.testing.assert_array_equal(x.breaks, y.breaks)
        np.testing.assert_array_equal(x.backed, y.backed)
    assert a.blend.checked == b.blend.checked and a.blend.drop_unlike == b.blend.drop_unlike


def test_a_profile_grown_photo_by_photo_checks_as_one_built_at_once(monkeypatch):
    # each add re-scores only the new photo (the others' checks kept with the profile): the guard
    # must back exactly what a profile of the same photos built from nothing backs, through a
    # replaced photo, an undone one and the oldest photos dropped
    monkeypatch.setattr(profile_mod, "MAX_DICE", 60)
    table = TableSet(seed=21)
    shots = [table.photo() for _ in range(10)]
    prof = Profile.empty(READER, DIM)
    for k, shot in enumerate(shots):
        checked = np.arange(len(shot[1])) % 3 != 0  # some dice the reader's own guess
        prof = prof.add(f"photo {k}", *shot, None, checked)
        if k == 5:
            prof = prof.add("photo 3", *table.photo(), None, checked).remove("photo 1")
        _same_check(prof, Profile.merged(READER, DIM, [prof]))
    assert len(prof) <= 60 and prof.photos[0] != "photo 0" and prof.blend.checked > 0


# --- how each ink looks against its body (ink_look.py) --------------------------------------------

# Under this table's lamp the red ink and the orange one have nearly one hue; the orange is lighter
# against the body (its direction leans less dark). Per ink: its look's direction before noise.
LOOKS = _unit(np.array([[0.30, -0.55, -0.78], [0.42, -0.35, -0.84], [-0.6, 0.2, -0.77], [-0.5, -0.3, -0.81]]))


class LampSet(TableSet):
    """A set whose red and orange dice the colour head reads alike (orange, 0.7), and whose inks'
    looks against the bodies still tell them apart."""

    def photo(self, n: int = 8, checked: bool = True):
        emb, values, colors, bv, _ = super().photo(n)
        bc = np.full((n, N_COLORS), 0.05)
        bc[np.arange(n), colors] = 0.85
        warm = (colors == RED) | (colors == ORANGE)
        bc[warm] = 0.05
        bc[warm, ORANGE], bc[warm, RED] = 0.7, 0.2
        ink = _unit(LOOKS[colors] + 0.03 * self.rng.normal(size=(n, 3)))
        return emb, values, colors, bv, bc, None, np.full(n, checked), ink


def test_an_inks_look_against_its_body_tells_red_from_orange_where_the_colour_head_cannot():
    table = LampSet(seed=21)
    prof = Profile.empty(READER, DIM)
    for k in range(4):
        prof = prof.add(f"photo {k}", *table.photo(12))
    assert prof.uses_inks and prof.blend.color.backed[ORANGE, RED] and not prof.blend.color.backed[RED, ORANGE]
    base = learnt = blind = 0
    for _ in range(10):
        emb, values, colors, bv, bc, _, _, ink = table.photo()
        base += int((bc.argmax(1) != colors).sum())
        learnt += int((prof.adjust(emb, bv, bc, ink)[1].argmax(1) != colors).sum())
        blind += int((prof.adjust(emb, bv, bc)[1].argmax(1) != colors).sum())  # no ink measured: the head alone
    assert base > 10 and learnt == 0 and blind > 10


def test_an_inks_look_is_learnt_from_checked_dice_only():
    table = LampSet(seed=22)
    prof = Profile.empty(READER, DIM)
    for k in range(4):  # confirmed as read, nobody checked: every red die stands as orange
        emb, values, colors, bv, bc, face, _, ink = table.photo(checked=False)
        prof = prof.add(f"photo {k}", emb, values, bc.argmax(1), bv, bc, face, np.zeros(len(values), bool), ink)
    assert not prof.uses_inks and not prof.blend.color.backed.any()


def test_the_file_keeps_each_dies_ink_and_an_older_file_has_none_measured():
    table = LampSet(seed=23)
    prof = Profile.empty(READER, DIM)
    for k in range(3):
        prof = prof.add(f"photo {k}", *table.photo())
    back = Profile.from_bytes(prof.to_bytes())
    np.testing.assert_allclose(back.ink, prof.ink, atol=2e-3)
    assert back.uses_inks and np.array_equal(back.blend.color.backed, prof.blend.color.backed)
    with np.load(io.BytesIO(prof.to_bytes())) as npz:
        arrays = {k: npz[k] for k in npz.files if k != "ink"}
    head = json.loads(bytes(arrays.pop("header")).decode())
    old = Profile.from_bytes(_npz(header=np.frombuffer(json.dumps({**head, "version": 2}).encode(), np.uint8),
                                  **arrays))
    assert np.isnan(old.ink).all() and not old.uses_inks


def test_a_look_like_no_learnt_ink_says_nothing_of_the_dies_ink():
    # a glare or a body taken for ink: brighter than the body, far from every learnt ink's look
    table = LampSet(seed=24)
    prof = Profile.empty(READER, DIM)
    for k in range(4):
        prof = prof.add(f"photo {k}", *table.photo(12))
    looks = prof.blend.model.looks
    assert looks is not None
    odd = _unit(np.array([[0.6, 0.63, 0.5], [0.42, -0.35, -0.84]]))
    read = np.array([[0.2, 0.7, 0.05, 0.05]] * 2)
    got = looks.probs(read, odd)
    np.testing.assert_array_equal(got[0], read[0])  # unlike any ink: as read
    assert got[1].argmax() == ORANGE and got[1, ORANGE] > read[1, ORANGE]  # an orange look: surer orange
