"""Learning one table's dice from the players' confirmations: a dice-set profile.

Every confirmed photo is a labelled example of exactly this set under exactly this light. A
profile keeps, for each die the players confirmed, the reader's embedding of its crop (what the
reader's heads read, companion/vision/models.py), its confirmed value and colour, whether a
player checked it (or corrected it), and what the base reader said about it.

What a table changes is learnt per ink and per value, each from its own dice:

- *inks*: how each ink looks to the colour head (the mean of its learnt dice's centred
  log-probabilities: an orange-looking red), and how it looks against the body under this
  light (ink_look.py: hue and darkness; learnt from checked dice only, InkLooks). A crop's
  nearest learnt dice are close for their value, not their ink: they never move its colour.
- *numerals*: one shift per value of the value head's log-probabilities (this font's 6 read as a
  9), and a kernel over cosine similarity that gives every value the mass of the learnt dice of
  that value that look like this crop,
      p(k) = (p_base(k) + w * mass(k)) / (1 + w * total mass).

A die nobody checked is the reader's own guess: it teaches only while no checked die of the
same look (cosine >= SAME_LOOK) says otherwise, and it is never counted as a fix.

The guard checks what the profile will do: each learnt photo in turn, in the order learnt, is
read with what the photos before it taught (as the page meets them). Each change of a reading
(base answer b -> profile answer a) on those photos is a fix (a is the confirmed answer), a
break (b was), or neither. A change b -> a is backed when the check saw such changes fix
dice and break none, per pair of inks and per pair of values. Reading
with the profile, a die keeps the base reader's probabilities unless the profile changes its
answer and the guard backs that change; a change it cannot back is not applied and the die is
flagged (`Applied.unbacked`). So a profile never makes a reading surer without changing it,
and never changes one the check did not back.

Pure numpy, no I/O except to_bytes/from_bytes (a versioned .npz, no pickles).
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
import zipfile
import zlib
from dataclasses import dataclass, field, fields, replace

import numpy as np

from companion.vision.decoder import COLOR_CLASSES, VALUE_CLASSES
from companion.vision.ink_look import LOOK_DIMS

FORMAT = "phase10-dice-profile"
# 2: each die says whether a player checked it (version 1 files: nobody did); 3: and how its
# ink looks against its body (ink_look.py; older files: not measured)
VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
N_VALUES, N_COLORS = len(VALUE_CLASSES), len(COLOR_CLASSES)
# The kernel exp(SHARPNESS * (cos - 1)): a crop of the same face of this set at another turn,
# tilt and place in the photo scores cos 0.92-0.99 (mass 0.2-0.8); a different face rarely
# over 0.88 (mass under 0.09).
SHARPNESS = 20.0
VALUE_WEIGHT = 1.0  # weight of the learnt dice's value mass against the base reader
BIAS_PRIOR = 0.3  # how strongly a head's learnt shift is held at 0 (in dice)
BIAS_STEPS = 20
MIN_PHOTOS = 2  # the guard needs a photo to check and one before it to learn from
CHECK_PHOTOS = 24  # the guard checks the latest photos (each against all before it)
MIN_FIXES = 1  # checked dice a change must have fixed, breaking none, to be backed
SAME_LOOK = 0.92  # a checked die this close to an unchecked one shows the same face: its label wins
# A box the face head is not sure of (below FACE_UNSURE) and that looks like none of the
# learnt dice (cosine under UNLIKE with each) is not one of this set's dice: clutter, a card,
# a die's side face. A top face of this set scores 0.8-0.99 with the nearest learnt die; the
# boxes the base reader keeps that are no die score 0.5-0.85 (on the tuning games), and so
# does now and then a real die at the photo's edge, which the face head then doubts too (0.67
# on a tuning game): hence the face head's part is kept strict.
# Only once DROP_AFTER dice are learnt, and only if no learnt die would have been dropped.
FACE_UNSURE = 0.65
UNLIKE = 0.75
DROP_AFTER = 15
MAX_DICE = 600  # learnt dice kept (about 80 photos); beyond it the oldest photos' dice are dropped
TRIMMED_TO = 0.8  # ... down to this share of MAX_DICE
_TINY = 1e-12


class ProfileError(ValueError):
    """A profile file or learnt die that cannot be used (a sentence saying why)."""


@dataclass(frozen=True)
class Check:
    """What the guard saw for one head on the photos it checked: per (base answer, profile
    answer), the changes that fixed a die and those that broke one."""

    fixes: np.ndarray  # (k, k) int
    breaks: np.ndarray  # (k, k) int
    backed: np.ndarray  # (k, k) bool: changes from -> to that the profile may make

    @classmethod
    def none(cls, k: int) -> "Check":
        z = np.zeros((k, k), np.int64)
        return cls(z, z, np.zeros((k, k), bool))

    @property
    def errors(self) -> tuple[int, int]:
        """Errors the backed changes would have fixed/made, as (fixed, broken)."""
        return int(self.fixes[self.backed].sum()), int(self.breaks[self.backed].sum())

    def learnt_from(self) -> list[int]:
        """The classes some backed change reads (the profile's answer)."""
        return [int(k) for k in np.flatnonzero(self.backed.any(axis=0))]


@dataclass(frozen=True)
class Blend:
    """What was learnt and what the guard lets it change."""

    model: "_Model | None" = None  # what every teaching die teaches (None: nothing checked yet)
    value: Check = field(default_factory=lambda: Check.none(N_VALUES))
    color: Check = field(default_factory=lambda: Check.none(N_COLORS))
    checked: int = 0  # dice the guard checked
    drop_unlike: bool = False  # drop unsure boxes unlike every learnt die (FACE_UNSURE, UNLIKE)

    @property
    def active(self) -> bool:
        return bool(self.value.backed.any() or self.color.backed.any() or self.drop_unlike)

    @property
    def value_errors(self) -> tuple[int, int]:
        return self.value.errors

    @property
    def color_errors(self) -> tuple[int, int]:
        return self.color.errors


@dataclass(frozen=True)
class Applied:
    """A reading's probabilities with what was learnt, and the dice the profile would have read
    otherwise without the guard's backing (to flag)."""

    value_probs: np.ndarray
    color_probs: np.ndarray
    unbacked: np.ndarray  # (n,) bool


@dataclass(frozen=True)
class Learnt:
    """What the profile learnt of one class (an ink or a value): from how many dice, checked by
    a player or not, and whether the guard lets it change readings to that class."""

    kind: str  # "ink" or "value"
    name: str  # "red", "7", "W"
    dice: int
    checked: int
    in_use: bool

    def to_json(self) -> dict:
        return {"kind": self.kind, "name": self.name, "dice": self.dice, "checked": self.checked,
                "in_use": self.in_use}

    def sentence(self) -> str:
        use = "changes readings" if self.in_use else "not used yet"
        return f"{self.kind} {self.name}: learnt from {self.dice} dice ({self.checked} checked), {use}"


@dataclass(frozen=True)
class Profile:
    """The learnt dice of one set (rows in learning order) and the guard's blend.

    `photos` names the photos the dice came from (an attempt id, a file name); `photo[i]` is
    the index in `photos` of die i's photo. Profiles are values: add/remove return new ones.
    """

    reader: str  # the reader's fingerprint: embeddings of another reader mean nothing here
    embeddings: np.ndarray  # (n, d) float32, rows of length 1
    values: np.ndarray  # (n,) value class (VALUE_CLASSES index)
    colors: np.ndarray  # (n,) colour class
    photo: np.ndarray  # (n,) index into photos
    photos: tuple[str, ...]
    base_value: np.ndarray  # (n, 11) the base reader's calibrated probabilities for the die
    base_color: np.ndarray  # (n, 4)
    base_face: np.ndarray  # (n,) the face head's probability that the box is a top face
    checked: np.ndarray  # (n,) bool: a player checked (or corrected) the die
    ink: np.ndarray  # (n, LOOK_DIMS) how its ink looks against its body (ink_look.py; NaN: not measured)
    blend: Blend = field(default_factory=Blend)
    # what the guard computed, kept with the profile (never in its file) for the next one (_Memo)
    memo: "_Memo | None" = field(default=None, compare=False, repr=False)

    @classmethod
    def empty(cls, reader: str, dim: int) -> "Profile":
        return cls(reader, np.zeros((0, dim), np.float32), np.zeros(0, np.int64), np.zeros(0, np.int64),
                   np.zeros(0, np.int64), (), np.zeros((0, N_VALUES), np.float32), np.zeros((0, N_COLORS), np.float32),
                   np.zeros(0, np.float32), np.zeros(0, bool), np.zeros((0, LOOK_DIMS), np.float32))

    @classmethod
    def merged(cls, reader: str, dim: int, parts: "list[Profile]", previous: "Profile | None" = None) -> "Profile":
        """One profile of the parts' dice (each part's photos in turn), checked once by the guard
        (`previous`: a profile of mostly the same photos, whose checks of them are not redone).
        Parts of another reader or width are refused (ProfileError)."""
        for part in parts:
            part.check_reader(reader)
            if part.dim != dim:
                raise ProfileError(f"a learnt photo has embeddings of {part.dim} values, the reader gives {dim}")
        if not parts:
            return cls.empty(reader, dim)
        rows, photo, names = parts[0]._rows(), parts[0].photo, parts[0].photos
        for part in parts[1:]:
            rows = _Rows.concat(rows, part._rows())
            photo = np.concatenate([photo, part.photo + len(names)])
            names = names + part.photos
        if len(set(names)) != len(names):
            raise ProfileError("two learnt parts name the same photo")
        return _trimmed(reader, rows, photo, names, previous)

    def __len__(self) -> int:
        return len(self.values)

    @property
    def dim(self) -> int:
        return int(self.embeddings.shape[1])

    def add(self, photo: str, embeddings: np.ndarray, values: Sequence[int] | np.ndarray,
            colors: Sequence[int] | np.ndarray, base_value: np.ndarray, base_color: np.ndarray,
            base_face: np.ndarray | None = None, checked: Sequence[bool] | np.ndarray | None = None,
            ink: np.ndarray | None = None) -> "Profile":
        """This profile with one photo's confirmed dice added (replacing that photo's, if any).
        `base_face` None: a reader without a face head (every box a face). `checked` None:
        every die was checked by a player (a label file). `ink` None: no ink measured."""
        embeddings = np.asarray(embeddings, np.float32).reshape(-1, self.dim)
        n = len(embeddings)
        values, colors = np.asarray(values, np.int64).reshape(n), np.asarray(colors, np.int64).reshape(n)
        face = np.ones(n, np.float32) if base_face is None else np.asarray(base_face, np.float32).reshape(n)
        looked = np.ones(n, bool) if checked is None else np.asarray(checked, bool).reshape(n)
        looks = np.full((n, LOOK_DIMS), np.nan, np.float32) if ink is None else np.asarray(ink, np.float32).reshape(n, LOOK_DIMS)
        rows = _Rows(embeddings, values, colors, np.asarray(base_value, np.float32).reshape(n, N_VALUES),
                     np.asarray(base_color, np.float32).reshape(n, N_COLORS), face, looked, looks)
        rows.check()
        kept_rows, kept_photo, kept_names = self._without(photo)
        names = kept_names + (photo,)
        merged = _Rows.concat(kept_rows, rows)
        photo_idx = np.concatenate([kept_photo, np.full(n, len(names) - 1, np.int64)])
        return _trimmed(self.reader, merged, photo_idx, names, self)

    def remove(self, photo: str) -> "Profile":
        """This profile without the dice of `photo` (unchanged when it has none)."""
        if photo not in self.photos:
            return self
        return _build(self.reader, *self._without(photo), self)

    def _without(self, photo: str) -> "tuple[_Rows, np.ndarray, tuple[str, ...]]":
        if photo not in self.photos:
            return self._rows(), self.photo, self.photos
        gone = self.photos.index(photo)
        keep = self.photo != gone
        names = self.photos[:gone] + self.photos[gone + 1:]
        return self._rows().take(keep), self.photo[keep] - (self.photo[keep] > gone), names

    def check_reader(self, fingerprint: str) -> None:
        """ProfileError unless this profile was learnt with the reader of that fingerprint."""
        if fingerprint and self.reader != fingerprint:
            raise ProfileError(f"the profile was learnt with another reader ({self.reader}, this one is "
                               f"{fingerprint}): learn it again from the labelled photos")

    def _rows(self) -> "_Rows":
        return _Rows(self.embeddings, self.values, self.colors, self.base_value, self.base_color, self.base_face,
                     self.checked, self.ink)

    def learnt(self) -> list[Learnt]:
        """Per ink, then per value: how many dice taught it and whether it changes readings."""
        out = []
        for kind, labels, names, check in (("ink", self.colors, [c.value for c in COLOR_CLASSES], self.blend.color),
                                           ("value", self.values, [_value_name(v) for v in VALUE_CLASSES],
                                            self.blend.value)):
            used = set(check.learnt_from())
            for k, name in enumerate(names):
                mine = labels == k
                if mine.any():
                    out.append(Learnt(kind, name, int(mine.sum()), int((mine & self.checked).sum()), k in used))
        return out

    def keeps(self, embeddings: np.ndarray | None, face_probs: np.ndarray | None) -> np.ndarray | None:
        """Per box: is it kept (None: every box, the profile does not judge)? A box is dropped
        when the face head is unsure of it and it looks like none of this set's learnt dice."""
        if embeddings is None or face_probs is None or not self.blend.drop_unlike or len(self) == 0:
            return None
        like = (np.asarray(embeddings, np.float32) @ self.embeddings.T).max(axis=1)
        return ~((np.asarray(face_probs) < FACE_UNSURE) & (like < UNLIKE))

    @property
    def uses_inks(self) -> bool:
        """Whether reading with this profile asks how the dice's inks look (ink_look.py)."""
        return self.blend.model is not None and self.blend.model.looks is not None

    def apply(self, embeddings: np.ndarray | None, value_probs: np.ndarray, color_probs: np.ndarray,
              ink: np.ndarray | None = None) -> Applied:
        """The base reader's calibrated probabilities for some crops where the guard backs the
        profile's other answer; the dice whose other answer it does not back, to flag. `ink`:
        how the crops' inks look (ink_look.py; None: not measured)."""
        n = len(value_probs)
        b = self.blend
        if embeddings is None or b.model is None or n == 0:
            return Applied(value_probs, color_probs, np.zeros(n, bool))
        new_v, new_c = b.model.predict(np.asarray(embeddings, np.float32), value_probs, color_probs, ink=ink)
        out_v, flag_v = _guarded(value_probs, new_v, b.value.backed)
        out_c, flag_c = _guarded(color_probs, new_c, b.color.backed)
        return Applied(out_v, out_c, flag_v | flag_c)

    def adjust(self, embeddings: np.ndarray | None, value_probs: np.ndarray, color_probs: np.ndarray,
               ink: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """apply's probabilities alone."""
        applied = self.apply(embeddings, value_probs, color_probs, ink)
        return applied.value_probs, applied.color_probs

    # ---- the file ---------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """The profile as a .npz (no pickles): its arrays and a JSON header with format and version."""
        header = {"format": FORMAT, "version": VERSION, "reader": self.reader, "dim": self.dim,
                  "photos": list(self.photos)}
        buf = io.BytesIO()
        np.savez_compressed(buf, header=np.frombuffer(json.dumps(header).encode("utf-8"), np.uint8),
                            embeddings=self.embeddings.astype(np.float16), values=self.values.astype(np.int8),
                            colors=self.colors.astype(np.int8), photo=self.photo.astype(np.int32),
                            base_value=self.base_value.astype(np.float16), base_color=self.base_color.astype(np.float16),
                            base_face=self.base_face.astype(np.float16), checked=self.checked.astype(np.int8),
                            ink=self.ink.astype(np.float16))
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "the profile") -> "Profile":
        """A profile read back; ProfileError (naming `name`) for anything that is not one."""
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in npz.files}
            header = json.loads(bytes(arrays.pop("header")).decode("utf-8"))
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, UnicodeDecodeError, zlib.error) as exc:
            raise ProfileError(f"{name} is not a dice profile file ({type(exc).__name__})") from None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise ProfileError(f"{name} is not a dice profile file (no {FORMAT} header)")
        if header.get("version") not in READABLE_VERSIONS:
            raise ProfileError(f"{name} is a version {header.get('version')} profile; this companion reads version {VERSION}")
        try:
            n = len(arrays["values"])
            # version 1 kept no checked bit: its dice count as confirmed but checked by nobody
            checked = arrays["checked"].astype(bool) if header["version"] >= 2 else np.zeros(n, bool)
            # before version 3 no ink was measured
            ink = (arrays["ink"].astype(np.float32) if header["version"] >= 3
                   else np.full((n, LOOK_DIMS), np.nan, np.float32))
            rows = _Rows(arrays["embeddings"].astype(np.float32), arrays["values"].astype(np.int64),
                         arrays["colors"].astype(np.int64), arrays["base_value"].astype(np.float32),
                         arrays["base_color"].astype(np.float32), arrays["base_face"].astype(np.float32), checked,
                         ink)
            photo = arrays["photo"].astype(np.int64)
            photos = tuple(str(p) for p in header["photos"])
            reader, dim = str(header["reader"]), int(header["dim"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ProfileError(f"{name} is damaged: {exc}") from None
        if rows.embeddings.ndim != 2 or rows.embeddings.shape[1] != dim or len(photo) != len(rows.values) \
                or (len(photo) and (photo.min() < 0 or photo.max() >= len(photos))):
            raise ProfileError(f"{name} is damaged: its arrays do not fit together")
        try:
            rows.check()
        except ProfileError as exc:
            raise ProfileError(f"{name} is damaged: {exc}") from None
        return _build(reader, rows, photo, photos)


def _value_name(value: int | None) -> str:
    return "W" if value is None else str(value)


@dataclass(frozen=True)
class _Rows:
    embeddings: np.ndarray
    values: np.ndarray
    colors: np.ndarray
    base_value: np.ndarray
    base_color: np.ndarray
    base_face: np.ndarray
    checked: np.ndarray
    ink: np.ndarray

    def arrays(self) -> tuple[np.ndarray, ...]:
        return tuple(getattr(self, f.name) for f in fields(self))

    def check(self) -> None:
        n = len(self.values)
        if any(len(a) != n for a in self.arrays()) or self.base_face.ndim != 1 or self.checked.ndim != 1:
            raise ProfileError("the learnt dice's arrays differ in length")
        if self.ink.shape != (n, LOOK_DIMS):
            raise ProfileError(f"a learnt die's ink is not {LOOK_DIMS} numbers")
        if n and (self.values.min() < 0 or self.values.max() >= N_VALUES):
            raise ProfileError("a learnt die's value is not 1..10 or W")
        if n and (self.colors.min() < 0 or self.colors.max() >= N_COLORS):
            raise ProfileError("a learnt die's colour is not one of the set's four")
        arrays = (self.embeddings, self.base_value, self.base_color, self.base_face)
        if not all(np.isfinite(a).all() for a in arrays):
            raise ProfileError("a learnt die has a number that is not finite")
        if n and np.abs(np.linalg.norm(self.embeddings, axis=1) - 1.0).max() > 0.01:
            raise ProfileError("a learnt die's embedding is not of length 1")
        measured = np.isfinite(self.ink).all(axis=1)
        if (np.isfinite(self.ink).any(axis=1) & ~measured).any() or (
                measured.any() and np.abs(np.linalg.norm(self.ink[measured], axis=1) - 1.0).max() > 0.01):
            raise ProfileError("a learnt die's ink is not a direction (or unmeasured: all NaN)")

    def take(self, keep: np.ndarray) -> "_Rows":
        return _Rows(*(a[keep] for a in self.arrays()))

    @staticmethod
    def concat(a: "_Rows", b: "_Rows") -> "_Rows":
        return _Rows(*(np.concatenate([x, y]) for x, y in zip(a.arrays(), b.arrays())))


def _trimmed(reader: str, rows: _Rows, photo: np.ndarray, photos: tuple[str, ...],
             previous: Profile | None = None) -> Profile:
    """_build, keeping at most MAX_DICE dice: the oldest photos go first, down to TRIMMED_TO of
    it (every photo's check then changes: at once for a few dozen photos, not at every photo)."""
    first = 0
    if len(photo) > MAX_DICE:
        while len(photo) - int((photo < first).sum()) > TRIMMED_TO * MAX_DICE and first < len(photos) - 1:
            first += 1
    if first:
        keep = photo >= first
        rows, photo, photos = rows.take(keep), photo[keep] - first, photos[first:]
    return _build(reader, rows, photo, photos, previous)


def _build(reader: str, rows: _Rows, photo: np.ndarray, photos: tuple[str, ...],
           previous: Profile | None = None) -> Profile:
    # unit rows again (the file keeps embeddings in float16); a unit row is left as it is, bit for
    # bit, so that a profile made from another sees the same dice (_Memo)
    norm = np.linalg.norm(rows.embeddings, axis=1, keepdims=True)
    emb = np.where(np.abs(norm - 1.0) > 1e-6, rows.embeddings / np.maximum(norm, _TINY), rows.embeddings)
    rows = replace(rows, embeddings=emb.astype(np.float32), ink=_unit_looks(rows.ink))
    memo = _Memo.of(rows, photo, photos, previous)
    blend = guard(rows, photo, memo, photos)
    return Profile(reader, rows.embeddings, rows.values, rows.colors, photo, photos, rows.base_value, rows.base_color,
                   rows.base_face, rows.checked, rows.ink, blend, memo)


@dataclass(frozen=True)
class _Tally:
    """One checked photo's changes (fixes and breaks per head) and the value shift it was read with."""

    fixes_v: np.ndarray
    breaks_v: np.ndarray
    fixes_c: np.ndarray
    breaks_c: np.ndarray
    dice: int
    bias: np.ndarray


@dataclass(frozen=True)
class _Memo:
    """The dice's cosines, and each checked photo's tally keyed by what it depends on (the photos
    up to it and which of their dice teach): a profile made from another keeps what is unchanged,
    so adding a photo scores that photo alone (the guard re-scores, never re-reads)."""

    cos: np.ndarray  # (n, n)
    same: np.ndarray  # (photos,) bool: the photo's dice are the previous profile's, unchanged
    tallies: dict

    @classmethod
    def of(cls, rows: _Rows, photo: np.ndarray, photos: tuple[str, ...], previous: Profile | None) -> "_Memo":
        n = len(rows.values)
        src = np.full(n, -1, np.int64)
        same = np.zeros(len(photos), bool)
        old = previous.memo if previous is not None else None
        if old is not None and previous is not None:
            where = {name: k for k, name in enumerate(previous.photos)}
            mine, theirs = _spans(photo, len(photos)), _spans(previous.photo, len(previous.photos))
            for k, name in enumerate(photos):
                j = where.get(name)
                if j is not None and _same_dice(rows, mine[k], previous, theirs[j]):
                    src[mine[k]] = np.arange(theirs[j].start, theirs[j].stop)
                    same[k] = True
        known = src >= 0
        cos = np.empty((n, n), np.float32)
        if old is not None and known.any():
            m = int(known.sum())
            if known[:m].all() and np.array_equal(src[:m], np.arange(src[0], src[0] + m)):
                cos[:m, :m] = old.cos[src[0]:src[0] + m, src[0]:src[0] + m]  # the usual case: one span, in order
            else:
                cos[np.ix_(known, known)] = old.cos[np.ix_(src[known], src[known])]
        fresh = ~known
        if fresh.any():
            # numpy's own loops, not BLAS: a few rows against all, where BLAS's threads on a busy
            # machine can take tens of milliseconds to wake
            cos[fresh] = np.einsum("id,jd->ij", rows.embeddings[fresh], rows.embeddings)
            cos[:, fresh] = cos[fresh].T
        return cls(cos, same, dict(old.tallies) if old is not None else {})

    def known(self, photos: tuple[str, ...], upto: np.ndarray, teach: np.ndarray, k: int) -> "tuple[tuple, _Tally | None]":
        """What photo k's tally depends on (the photos up to it, which of their dice teach), and
        the tally kept for it (None: none, or a photo up to it is not the previous profile's)."""
        key = (photos[:k + 1], teach[upto].tobytes())
        return key, (self.tallies.get(key) if self.same[:k + 1].all() else None)


def _kernel_of(cos: np.ndarray) -> np.ndarray:
    return np.exp(SHARPNESS * (cos - 1.0))


def _blend_mass(probs: np.ndarray, mass: np.ndarray, weight: float) -> np.ndarray:
    if weight <= 0:
        return probs
    mass = weight * mass
    return (probs + mass) / (1.0 + mass.sum(axis=1, keepdims=True))


def _shifted(probs: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """The probabilities with each class's log-probability moved by `bias` (None: as they are)."""
    if bias is None:
        return probs
    z = np.log(np.maximum(probs, _TINY)) + bias
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def fit_bias(probs: np.ndarray, labels: np.ndarray, prior: float | None = None,
             start: np.ndarray | None = None) -> np.ndarray:
    """The per-class shift of the log-probabilities that best fits the labels (Newton steps on
    the log-loss plus prior/2 * |bias|^2, from `start`). A class no learnt die shows keeps a
    shift of 0."""
    prior = BIAS_PRIOR if prior is None else prior
    k = probs.shape[1]
    onehot = np.eye(k)[labels]
    shown = onehot.any(axis=0)
    bias = np.where(shown, start, 0.0) if start is not None else np.zeros(k)
    for _ in range(BIAS_STEPS):
        q = _shifted(probs, bias)
        grad = (q - onehot).sum(axis=0) + prior * bias
        hess = np.diag(q.sum(axis=0)) - q.T @ q + prior * np.eye(k)
        step = np.linalg.solve(hess, grad)
        step[~shown] = 0.0  # an ink or value no die taught: its look is not this profile's to move
        bias -= step
        if np.abs(step).max() < 1e-6:
            break
    return bias


def _guarded(base: np.ndarray, new: np.ndarray, backed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per die: the new probabilities where they change the answer and that change is backed,
    else the base's; and the dice whose change is not backed."""
    b, a = base.argmax(axis=1), new.argmax(axis=1)
    changed = a != b
    ok = changed & backed[b, a]
    out = np.where(ok[:, None], new, base)
    return out, changed & ~ok


def _ink_space(probs: np.ndarray) -> np.ndarray:
    """The colour head's answer as a point: its log-probabilities, centred."""
    z = np.log(np.maximum(probs.astype(np.float64), INK_FLOOR))
    return z - z.mean(axis=1, keepdims=True)


# How an ink looks to the colour head on the training look's dice: the point of a die read 0.97
# sure (INK_PRIOR such dice), where no die of this set taught it otherwise.
INK_FLOOR = 1e-6
INK_PRIOR = 0.5
INK_SPREAD = 1.0  # least spread (in the ink space's units) an ink's learnt dice are given
_DEFAULT_INKS = _ink_space(np.eye(N_COLORS) * 0.96 + 0.01)


@dataclass(frozen=True)
class Inks:
    """How each ink looks to the colour head under this light, on this set's bodies: the mean
    point of the dice confirmed in that ink (and of none other), and the spread about it."""

    means: np.ndarray  # (4, 4)
    spread: float

    @classmethod
    def of(cls, color_probs: np.ndarray, colors: np.ndarray) -> "Inks":
        z = _ink_space(color_probs)
        means = np.empty((N_COLORS, N_COLORS))
        sq, n = 0.0, 0
        for c in range(N_COLORS):
            mine = z[colors == c]
            means[c] = (mine.sum(axis=0) + INK_PRIOR * _DEFAULT_INKS[c]) / (len(mine) + INK_PRIOR)
            sq += float(((mine - means[c]) ** 2).sum())
            n += len(mine)
        return cls(means, max(INK_SPREAD, np.sqrt(sq / max(1, n * N_COLORS))))

    def probs(self, color_probs: np.ndarray) -> np.ndarray:
        d = ((_ink_space(color_probs)[:, None, :] - self.means[None]) ** 2).sum(axis=2)
        z = -d / (2 * self.spread ** 2)
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)


# How each ink looks against its body under this table's light (ink_look.py), learnt from the
# dice a player checked in that ink: an ink needs LOOK_MIN_DICE of them, and two inks learnt so
# are needed to tell a die's ink between them. Each learnt ink is a normal distribution about
# its dice's mean direction with the inks' pooled spread, shrunk towards LOOK_SPREAD.
LOOK_MIN_DICE = 3
LOOK_SPREAD = 0.08
LOOK_PRIOR = 3.0  # how many dice' worth of LOOK_SPREAD the pooled spread starts from
LOOK_WEIGHT = 2.0  # the looks' log-likelihood against the colour head's log-probabilities
LOOK_DOUBT = 4.0  # an unchecked die's look this much likelier under another learnt ink: its ink is doubted
# a look this far (squared Mahalanobis distance) from every learnt ink is like none of them (a
# glare, a body taken for ink): it says nothing of the die's ink (chi-square, 3 dof: p = 0.001)
LOOK_FAR = 16.0


def _unit_looks(ink: np.ndarray) -> np.ndarray:
    """Ink directions of length 1 again (the file keeps them in float16); NaN rows stay."""
    norm = np.linalg.norm(ink, axis=1, keepdims=True)
    return np.where(np.abs(norm - 1.0) > 1e-6, ink / np.maximum(norm, _TINY), ink).astype(np.float32)


@dataclass(frozen=True)
class InkLooks:
    """How the learnt inks look under this light on this set's bodies (LOOK_MIN_DICE and the
    rest above): a die's measured look moves its colour only among the inks learnt so, each in
    proportion to the likelihood of its look under that ink; the other inks keep their share."""

    means: np.ndarray  # (4, LOOK_DIMS); rows of inks not learnt are unused
    precision: np.ndarray  # (LOOK_DIMS, LOOK_DIMS)
    learnt: np.ndarray  # (4,) bool

    @classmethod
    def of(cls, looks: np.ndarray, colors: np.ndarray) -> "InkLooks | None":
        measured = np.isfinite(looks).all(axis=1)
        looks, colors = looks[measured].astype(np.float64), colors[measured]
        counts = np.bincount(colors, minlength=N_COLORS)
        learnt = counts >= LOOK_MIN_DICE
        if learnt.sum() < 2:
            return None
        means = np.zeros((N_COLORS, LOOK_DIMS))
        scatter = LOOK_PRIOR * LOOK_SPREAD ** 2 * np.eye(LOOK_DIMS)
        for c in np.flatnonzero(learnt):
            mine = looks[colors == c]
            means[c] = mine.mean(axis=0)
            scatter += (mine - means[c]).T @ (mine - means[c])
        dof = LOOK_PRIOR + float(counts[learnt].sum() - learnt.sum())
        return cls(means, np.linalg.inv(scatter / dof), learnt)

    def log_likelihood(self, looks: np.ndarray) -> np.ndarray:
        """(n, 4) each look's log-likelihood under each learnt ink (-inf for the others; NaN for
        a look not measured)."""
        d = looks.astype(np.float64)[:, None, :] - self.means[None]
        ll = -0.5 * np.einsum("nci,ij,ncj->nc", d, self.precision, d)
        return np.where(self.learnt[None], ll, -np.inf)

    def near(self, looks: np.ndarray) -> np.ndarray:
        """(n,) bool: the look was measured and lies within LOOK_FAR of some learnt ink."""
        ll = self.log_likelihood(looks)
        return np.isfinite(looks).all(axis=1) & (-2.0 * ll.max(axis=1, initial=-np.inf) <= LOOK_FAR)

    def probs(self, color_probs: np.ndarray, looks: np.ndarray) -> np.ndarray:
        out = np.array(color_probs, np.float64)
        rows = np.flatnonzero(self.near(looks))
        if not len(rows):
            return out
        cols = np.flatnonzero(self.learnt)
        ll = LOOK_WEIGHT * self.log_likelihood(looks[rows])[:, cols]
        part = out[np.ix_(rows, cols)]
        z = np.log(np.maximum(part, _TINY)) + ll
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        out[np.ix_(rows, cols)] = part.sum(axis=1, keepdims=True) * e / e.sum(axis=1, keepdims=True)
        return out


@dataclass(frozen=True)
class _Model:
    """What some learnt dice teach: the inks' looks (to the colour head, and against their
    bodies), the values' shift, and the dice that teach values by likeness."""

    embeddings: np.ndarray  # the dice that teach
    values: np.ndarray
    value_bias: np.ndarray | None
    inks: Inks | None
    value_weight: float
    looks: InkLooks | None = None

    @classmethod
    def of(cls, rows: _Rows, teach: np.ndarray, value_bias: np.ndarray | None = None, weight: float = VALUE_WEIGHT) -> "_Model":
        inks = Inks.of(rows.base_color[teach], rows.colors[teach]) if teach.any() else None
        # an ink's look is learnt from the dice a player checked in it, never from the reader's guesses
        looked = teach & rows.checked
        looks = InkLooks.of(rows.ink[looked], rows.colors[looked]) if looked.any() else None
        return cls(rows.embeddings[teach], rows.values[teach], value_bias, inks, weight, looks)

    def predict(self, embeddings: np.ndarray, value_probs: np.ndarray, color_probs: np.ndarray,
                cos: np.ndarray | None = None, ink: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The heads' probabilities with what was taught (`cos`: the crops' cosines with the
        teaching dice, when known; `ink`: how the crops' inks look, when measured)."""
        value = _shifted(value_probs.astype(np.float64), self.value_bias)
        if self.value_weight > 0 and len(self.values):
            kernel = _kernel_of(embeddings @ self.embeddings.T if cos is None else cos)
            value = _blend_mass(value, kernel @ np.eye(N_VALUES)[self.values], self.value_weight)
        color = color_probs if self.inks is None else self.inks.probs(color_probs)
        if self.looks is not None and ink is not None:
            color = self.looks.probs(color, ink)
        return value, color


def _teaching(rows: _Rows, cos: np.ndarray | None = None) -> np.ndarray:
    """The dice that teach: every checked die, and each unchecked one (the reader's own guess)
    that no checked die of the same look contradicts (`cos`: the dice's cosines, if known)."""
    teach = rows.checked.copy()
    looked = np.flatnonzero(rows.checked)
    if len(looked) == 0:
        return np.ones(len(rows.values), bool)
    near = rows.embeddings @ rows.embeddings[looked].T if cos is None else cos[:, looked]
    same = near >= SAME_LOOK
    other = (rows.values[:, None] != rows.values[looked][None]) | (rows.colors[:, None] != rows.colors[looked][None])
    contradicted = (same & other).any(axis=1)
    return teach | ~contradicted


def _look_doubted(rows: _Rows) -> np.ndarray:
    """The dice nobody checked whose ink looks, against their body, like another ink the checked
    dice taught (by LOOK_DOUBT nats or more) than the ink they were confirmed in: the reader's
    own guess, which neither teaches nor counts as broken when a profile reads it otherwise."""
    doubted = np.zeros(len(rows.values), bool)
    looked = rows.checked
    looks = InkLooks.of(rows.ink[looked], rows.colors[looked]) if looked.any() else None
    if looks is None:
        return doubted
    ll = looks.log_likelihood(rows.ink)
    mine = ll[np.arange(len(ll)), rows.colors]
    doubted = ~rows.checked & looks.learnt[rows.colors] & (ll.max(axis=1) - mine >= LOOK_DOUBT)
    return doubted & np.isfinite(mine) & looks.near(rows.ink)


def guard(rows: _Rows, photo: np.ndarray, memo: _Memo | None = None, photos: tuple[str, ...] = ()) -> Blend:
    """The shifts learnt from every teaching die, and what the check backs (module docstring).
    `memo` (_Memo): the dice's cosines and the tallies of photos checked before, reused."""
    order = np.unique(photo)
    if len(order) < MIN_PHOTOS:
        return Blend()
    cos = memo.cos if memo is not None else rows.embeddings @ rows.embeddings.T  # once, for every use below
    teach = _teaching(rows, cos) & ~_look_doubted(rows)
    model = _Model.of(rows, teach, fit_bias(rows.base_value[teach], rows.values[teach])) if teach.any() else None
    fixes_v = np.zeros((N_VALUES, N_VALUES), np.int64)
    breaks_v = np.zeros_like(fixes_v)
    fixes_c = np.zeros((N_COLORS, N_COLORS), np.int64)
    breaks_c = np.zeros_like(fixes_c)
    checked = 0
    bias = None
    used: dict = {}
    for k in order[max(1, len(order) - CHECK_PHOTOS):]:
        before = (photo < k) & teach
        if not before.any():
            continue
        key, tally = memo.known(photos, photo <= k, teach, int(k)) if memo is not None else (None, None)
        if tally is None:
            tally = _check_photo(rows, photo == k, before, teach, cos, bias)
        if key is not None:
            used[key] = tally
        bias = tally.bias
        fixes_v += tally.fixes_v
        breaks_v += tally.breaks_v
        fixes_c += tally.fixes_c
        breaks_c += tally.breaks_c
        checked += tally.dice
    if memo is not None:  # the tallies this profile's photos still need, for the next one
        memo.tallies.clear()
        memo.tallies.update(used)
    return Blend(model, _check(fixes_v, breaks_v), _check(fixes_c, breaks_c), checked, _may_drop(rows, photo, cos))


def _spans(photo: np.ndarray, photos: int) -> list[slice]:
    """Each photo's rows (the rows are in learning order: each photo's dice together)."""
    edges = np.searchsorted(photo, np.arange(photos + 1))
    return [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]


def _same_dice(rows: _Rows, mine: slice, previous: Profile, theirs: slice) -> bool:
    return (mine.stop - mine.start == theirs.stop - theirs.start
            and np.array_equal(rows.embeddings[mine], previous.embeddings[theirs])
            and np.array_equal(rows.values[mine], previous.values[theirs])
            and np.array_equal(rows.colors[mine], previous.colors[theirs])
            and np.array_equal(rows.checked[mine], previous.checked[theirs])
            and np.array_equal(rows.ink[mine], previous.ink[theirs], equal_nan=True))


def _check_photo(rows: _Rows, out: np.ndarray, before: np.ndarray, teach: np.ndarray, cos: np.ndarray,
                 bias: np.ndarray | None) -> _Tally:
    """One photo read with what the teaching dice before it taught: its changes, fixes and breaks."""
    bias = fit_bias(rows.base_value[before], rows.values[before], start=bias)
    past = _Model.of(rows, before, bias)
    new_v, new_c = past.predict(rows.embeddings[out], rows.base_value[out], rows.base_color[out],
                                cos[np.ix_(out, before)], rows.ink[out])
    fixes_v = np.zeros((N_VALUES, N_VALUES), np.int64)
    breaks_v = np.zeros_like(fixes_v)
    fixes_c = np.zeros((N_COLORS, N_COLORS), np.int64)
    breaks_c = np.zeros_like(fixes_c)
    # a fix counts only where a player checked the die; a break wherever its confirmed answer stands
    trusted = rows.checked[out] | teach[out]
    _tally(fixes_v, breaks_v, rows.base_value[out], new_v, rows.values[out], rows.checked[out], trusted)
    _tally(fixes_c, breaks_c, rows.base_color[out], new_c, rows.colors[out], rows.checked[out], trusted)
    return _Tally(fixes_v, breaks_v, fixes_c, breaks_c, int(out.sum()), bias)


def _tally(fixes: np.ndarray, breaks: np.ndarray, base: np.ndarray, new: np.ndarray, labels: np.ndarray,
           looked: np.ndarray, trusted: np.ndarray) -> None:
    b, a = base.argmax(axis=1), new.argmax(axis=1)
    changed = a != b
    np.add.at(fixes, (b, a), changed & (a == labels) & looked)
    np.add.at(breaks, (b, a), changed & (b == labels) & trusted)


def _check(fixes: np.ndarray, breaks: np.ndarray) -> Check:
    """Backed: the changes that fixed some checked die and broke none, per pair of classes (a
    red read orange says nothing of a blue; a 6 read 9 nothing of a 1 read 7)."""
    backed = (fixes >= MIN_FIXES) & (breaks == 0)
    np.fill_diagonal(backed, False)
    return Check(fixes, breaks, backed)


def _may_drop(rows: _Rows, photo: np.ndarray, cos: np.ndarray) -> bool:
    """Whether dropping unsure boxes unlike every learnt die spares every learnt die, each
    judged by the other photos' dice."""
    if len(rows.base_face) < DROP_AFTER:
        return False
    apart = photo[:, None] != photo[None, :]
    like = np.where(apart, cos, -1.0).max(axis=1)
    return not bool(((rows.base_face < FACE_UNSURE) & (like < UNLIKE)).any())
