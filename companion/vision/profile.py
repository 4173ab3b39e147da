"""Learning one table's dice from the players' confirmations: a dice-set profile.

Every confirmed photo is a labelled example of exactly this set under exactly this light. A
profile keeps, for each die the players confirmed, the reader's embedding of its crop (what the
reader's heads read, companion/vision/models.py), its confirmed value and colour, and what the
base reader said about it. Reading with a profile, each crop's embedding is compared with the
learnt ones: a kernel over cosine similarity gives every value (and every colour) the mass of
the learnt dice that look like this crop, and that mass is added to the base reader's
probabilities,

    p(k) = (p_base(k) + w * mass(k)) / (1 + w * total mass),

so a crop like nothing learnt keeps the base reader's answer, and the more dice of this set
have been learnt that look like it, the more they weigh. The decoder's set constraint applies
on top, as without a profile.

The guard: each update is checked on what was learnt, keeping each photo aside in turn (the
others' dice predict its dice). Each head (value, colour) takes the weight w of WEIGHTS,
with or without its learnt shift (fit_bias), that makes the fewest errors on the dice kept
aside, then fits them best; the base reader alone unless that makes no more errors than the
base reader and fits the kept-aside dice better. With fewer than MIN_PHOTOS photos nothing can be kept aside and the
base reader reads alone.

Pure numpy, no I/O except to_bytes/from_bytes (a versioned .npz, no pickles).
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field, fields

import numpy as np

from companion.vision.decoder import COLOR_CLASSES, VALUE_CLASSES

FORMAT = "phase10-dice-profile"
VERSION = 1
N_VALUES, N_COLORS = len(VALUE_CLASSES), len(COLOR_CLASSES)
# The kernel exp(SHARPNESS * (cos - 1)): a crop of the same face of this set at another turn,
# tilt and place in the photo scores cos 0.92-0.99 (mass 0.2-0.8); a different face rarely
# over 0.88 (mass under 0.09).
SHARPNESS = 20.0
WEIGHTS = (0.0, 0.25, 1.0, 4.0)  # candidate weights of the learnt dice against the base reader
BIAS_PRIOR = 0.3  # how strongly a head's learnt shift is held at 0 (in dice)
BIAS_STEPS = 20
FOLDS = 4  # the guard keeps one photo in FOLDS aside at a time
MIN_PHOTOS = 2  # the guard needs a photo to keep aside and one to learn from
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
_TINY = 1e-12


class ProfileError(ValueError):
    """A profile file or learnt die that cannot be used (a sentence saying why)."""


@dataclass(frozen=True)
class Blend:
    """What the guard chose: the weight of the learnt dice for each head (0: base reader alone),
    and the errors it counted on the dice kept aside (base, with the chosen weight)."""

    value_weight: float = 0.0
    color_weight: float = 0.0
    value_errors: tuple[int, int] = (0, 0)
    color_errors: tuple[int, int] = (0, 0)
    checked: int = 0  # dice kept aside in the check
    drop_unlike: bool = False  # drop unsure boxes unlike every learnt die (FACE_UNSURE, UNLIKE)
    value_bias: np.ndarray | None = None  # the heads' learnt log-probability shifts (None: none)
    color_bias: np.ndarray | None = None

    @property
    def active(self) -> bool:
        return self.value_weight > 0 or self.color_weight > 0 or self.value_bias is not None \
            or self.color_bias is not None or self.drop_unlike


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
    blend: Blend = field(default_factory=Blend)

    @classmethod
    def empty(cls, reader: str, dim: int) -> "Profile":
        return cls(reader, np.zeros((0, dim), np.float32), np.zeros(0, np.int64), np.zeros(0, np.int64),
                   np.zeros(0, np.int64), (), np.zeros((0, N_VALUES), np.float32), np.zeros((0, N_COLORS), np.float32),
                   np.zeros(0, np.float32))

    @classmethod
    def merged(cls, reader: str, dim: int, parts: "list[Profile]") -> "Profile":
        """One profile of the parts' dice (each part's photos in turn), checked once by the guard.
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
        return _trimmed(reader, rows, photo, names)

    def __len__(self) -> int:
        return len(self.values)

    @property
    def dim(self) -> int:
        return int(self.embeddings.shape[1])

    def add(self, photo: str, embeddings: np.ndarray, values, colors, base_value: np.ndarray,
            base_color: np.ndarray, base_face: np.ndarray | None = None) -> "Profile":
        """This profile with one photo's confirmed dice added (replacing that photo's, if any).
        `base_face` None: a reader without a face head (every box a face)."""
        embeddings = np.asarray(embeddings, np.float32).reshape(-1, self.dim)
        n = len(embeddings)
        values, colors = np.asarray(values, np.int64).reshape(n), np.asarray(colors, np.int64).reshape(n)
        face = np.ones(n, np.float32) if base_face is None else np.asarray(base_face, np.float32).reshape(n)
        rows = _Rows(embeddings, values, colors, np.asarray(base_value, np.float32).reshape(n, N_VALUES),
                     np.asarray(base_color, np.float32).reshape(n, N_COLORS), face)
        rows.check()
        kept = self.remove(photo) if photo in self.photos else self
        names = kept.photos + (photo,)
        merged = _Rows.concat(kept._rows(), rows)
        photo_idx = np.concatenate([kept.photo, np.full(n, len(names) - 1, np.int64)])
        return _trimmed(self.reader, merged, photo_idx, names)

    def remove(self, photo: str) -> "Profile":
        """This profile without the dice of `photo` (unchanged when it has none)."""
        if photo not in self.photos:
            return self
        gone = self.photos.index(photo)
        keep = self.photo != gone
        names = self.photos[:gone] + self.photos[gone + 1:]
        photo_idx = self.photo[keep] - (self.photo[keep] > gone)
        return _build(self.reader, self._rows().take(keep), photo_idx, names)

    def check_reader(self, fingerprint: str) -> None:
        """ProfileError unless this profile was learnt with the reader of that fingerprint."""
        if fingerprint and self.reader != fingerprint:
            raise ProfileError(f"the profile was learnt with another reader ({self.reader}, this one is "
                               f"{fingerprint}): learn it again from the labelled photos")

    def _rows(self) -> "_Rows":
        return _Rows(self.embeddings, self.values, self.colors, self.base_value, self.base_color, self.base_face)

    def keeps(self, embeddings: np.ndarray | None, face_probs: np.ndarray | None) -> np.ndarray | None:
        """Per box: is it kept (None: every box, the profile does not judge)? A box is dropped
        when the face head is unsure of it and it looks like none of this set's learnt dice."""
        if embeddings is None or face_probs is None or not self.blend.drop_unlike or len(self) == 0:
            return None
        like = (np.asarray(embeddings, np.float32) @ self.embeddings.T).max(axis=1)
        return ~((np.asarray(face_probs) < FACE_UNSURE) & (like < UNLIKE))

    def adjust(self, embeddings: np.ndarray | None, value_probs: np.ndarray, color_probs: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
        """The base reader's calibrated probabilities for some crops, with what was learnt added
        (unchanged where the guard keeps the base reader, or without embeddings)."""
        b = self.blend
        if embeddings is None or not b.active or len(self) == 0:
            return value_probs, color_probs
        kernel = _kernel(np.asarray(embeddings, np.float32), self.embeddings)
        return (_blend(_shifted(value_probs, b.value_bias), kernel, self.values, N_VALUES, b.value_weight),
                _blend(_shifted(color_probs, b.color_bias), kernel, self.colors, N_COLORS, b.color_weight))

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
                            base_face=self.base_face.astype(np.float16))
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "the profile") -> "Profile":
        """A profile read back; ProfileError (naming `name`) for anything that is not one."""
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in npz.files}
            header = json.loads(bytes(arrays.pop("header")).decode("utf-8"))
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, UnicodeDecodeError) as exc:
            raise ProfileError(f"{name} is not a dice profile file ({type(exc).__name__})") from None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise ProfileError(f"{name} is not a dice profile file (no {FORMAT} header)")
        if header.get("version") != VERSION:
            raise ProfileError(f"{name} is a version {header.get('version')} profile; this companion reads version {VERSION}")
        try:
            rows = _Rows(arrays["embeddings"].astype(np.float32), arrays["values"].astype(np.int64),
                         arrays["colors"].astype(np.int64), arrays["base_value"].astype(np.float32),
                         arrays["base_color"].astype(np.float32), arrays["base_face"].astype(np.float32))
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


@dataclass(frozen=True)
class _Rows:
    embeddings: np.ndarray
    values: np.ndarray
    colors: np.ndarray
    base_value: np.ndarray
    base_color: np.ndarray
    base_face: np.ndarray

    def arrays(self) -> tuple[np.ndarray, ...]:
        return tuple(getattr(self, f.name) for f in fields(self))

    def check(self) -> None:
        n = len(self.values)
        if any(len(a) != n for a in self.arrays()) or self.base_face.ndim != 1:
            raise ProfileError("the learnt dice's arrays differ in length")
        if n and (self.values.min() < 0 or self.values.max() >= N_VALUES):
            raise ProfileError("a learnt die's value is not 1..10 or W")
        if n and (self.colors.min() < 0 or self.colors.max() >= N_COLORS):
            raise ProfileError("a learnt die's colour is not one of the set's four")
        arrays = (self.embeddings, self.base_value, self.base_color, self.base_face)
        if not all(np.isfinite(a).all() for a in arrays):
            raise ProfileError("a learnt die has a number that is not finite")
        if n and np.abs(np.linalg.norm(self.embeddings, axis=1) - 1.0).max() > 0.01:
            raise ProfileError("a learnt die's embedding is not of length 1")

    def take(self, keep: np.ndarray) -> "_Rows":
        return _Rows(*(a[keep] for a in self.arrays()))

    @staticmethod
    def concat(a: "_Rows", b: "_Rows") -> "_Rows":
        return _Rows(*(np.concatenate([x, y]) for x, y in zip(a.arrays(), b.arrays())))


def _trimmed(reader: str, rows: _Rows, photo: np.ndarray, photos: tuple[str, ...]) -> Profile:
    """_build, keeping at most MAX_DICE dice: the oldest photos go first."""
    first = 0
    while len(photo) - int((photo < first).sum()) > MAX_DICE and first < len(photos) - 1:
        first += 1
    if first:
        keep = photo >= first
        rows, photo, photos = rows.take(keep), photo[keep] - first, photos[first:]
    return _build(reader, rows, photo, photos)


def _build(reader: str, rows: _Rows, photo: np.ndarray, photos: tuple[str, ...]) -> Profile:
    # unit rows again: the file keeps embeddings in float16
    emb = rows.embeddings / np.maximum(np.linalg.norm(rows.embeddings, axis=1, keepdims=True), _TINY)
    rows = _Rows(emb.astype(np.float32), *rows.arrays()[1:])
    blend = guard(rows.embeddings, rows.values, rows.colors, photo, rows.base_value, rows.base_color, rows.base_face)
    return Profile(reader, rows.embeddings, rows.values, rows.colors, photo, photos, rows.base_value, rows.base_color,
                   rows.base_face, blend)


def _kernel(queries: np.ndarray, learnt: np.ndarray) -> np.ndarray:
    """(q, n): exp(SHARPNESS * (cos - 1)) between unit rows."""
    return _kernel_of(queries @ learnt.T)


def _kernel_of(cos: np.ndarray) -> np.ndarray:
    return np.exp(SHARPNESS * (cos - 1.0))


def _mass(kernel: np.ndarray, labels: np.ndarray, classes: int) -> np.ndarray:
    """(q, classes): each class's summed kernel."""
    return kernel @ np.eye(classes, dtype=kernel.dtype)[labels]


def _blend(probs: np.ndarray, kernel: np.ndarray, labels: np.ndarray, classes: int, weight: float) -> np.ndarray:
    if weight <= 0:
        return probs
    return _blend_mass(probs, _mass(kernel, labels, classes), weight)


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


def fit_bias(probs: np.ndarray, labels: np.ndarray, prior: float | None = None) -> np.ndarray:
    """The per-class shift of the log-probabilities that best fits the labels (Newton steps on
    the log-loss plus prior/2 * |bias|^2): how this set's inks under this light move the base
    reader's colour answers, learnt from every confirmed die at once."""
    prior = BIAS_PRIOR if prior is None else prior
    k = probs.shape[1]
    onehot = np.eye(k)[labels]
    bias = np.zeros(k)
    for _ in range(BIAS_STEPS):
        q = _shifted(probs, bias)
        grad = (q - onehot).sum(axis=0) + prior * bias
        hess = np.diag(q.sum(axis=0)) - q.T @ q + prior * np.eye(k)
        step = np.linalg.solve(hess, grad)
        bias -= step
        if np.abs(step).max() < 1e-6:
            break
    return bias


@dataclass(frozen=True)
class _Option:
    bias: bool
    weight: float


def guard(embeddings: np.ndarray, values: np.ndarray, colors: np.ndarray, photo: np.ndarray,
          base_value: np.ndarray, base_color: np.ndarray, base_face: np.ndarray | None = None) -> Blend:
    """Each head's blend, chosen on the learnt dice with a share of the photos kept aside in turn."""
    n_photos = len(set(photo.tolist()))
    if n_photos < MIN_PHOTOS:
        return Blend()
    folds = _folds(photo)
    cos = embeddings @ embeddings.T
    apart = folds[:, None] != folds[None, :]  # dice kept aside never vote for each other
    kernel = np.where(apart, _kernel_of(cos), 0.0)
    value, value_errors = _choose(base_value, kernel, values, folds, VALUE_OPTIONS, shift_must_fix=True)
    color, color_errors = _choose(base_color, kernel, colors, folds, COLOR_OPTIONS)
    return Blend(value.weight, color.weight, value_errors, color_errors, len(values), _may_drop(cos, apart, base_face),
                 fit_bias(base_value, values) if value.bias else None,
                 fit_bias(base_color, colors) if color.bias else None)


def _may_drop(cos: np.ndarray, apart: np.ndarray, base_face: np.ndarray | None) -> bool:
    """Whether dropping unsure boxes unlike every learnt die spares every learnt die, each
    judged by the folds it was kept aside from."""
    if base_face is None or len(base_face) < DROP_AFTER:
        return False
    like = np.where(apart, cos, -1.0).max(axis=1)
    return not bool(((base_face < FACE_UNSURE) & (like < UNLIKE)).any())


def _folds(photo: np.ndarray) -> np.ndarray:
    """Each die's fold: its photo's rank modulo FOLDS (a photo's dice stay together)."""
    _, rank = np.unique(photo, return_inverse=True)
    return rank % FOLDS


def _choose(base: np.ndarray, kernel: np.ndarray, labels: np.ndarray, folds: np.ndarray,
            options: tuple[_Option, ...], shift_must_fix: bool = False) -> tuple[_Option, tuple[int, int]]:
    """The option with the fewest errors on the kept-aside dice (then the best fit), the base
    reader alone (the first option) unless another is no worse in errors and better in fit.
    `shift_must_fix`: an option with the shift must also make fewer errors than the base reader."""
    base = base.astype(np.float64)
    rows = np.arange(len(labels))
    biased = np.empty_like(base)
    if any(o.bias for o in options):
        for fold in np.unique(folds):
            out = folds == fold
            biased[out] = _shifted(base[out], fit_bias(base[~out], labels[~out]))

    mass = _mass(kernel, labels, base.shape[1])  # the same for every option: only its weight differs

    def score(option: _Option) -> tuple[int, float]:
        probs = _blend_mass(biased if option.bias else base, mass, option.weight)
        errors = int((probs.argmax(axis=1) != labels).sum())
        return errors, float(-np.log(probs[rows, labels] + _TINY).sum())

    scores = [score(o) for o in options]
    allowed = [i for i, o in enumerate(options)
               if not (shift_must_fix and o.bias and scores[i][0] >= scores[0][0])]
    best = min(allowed, key=lambda i: scores[i])
    if scores[best][0] > scores[0][0] or scores[best][1] >= scores[0][1]:
        best = 0
    return options[best], (scores[0][0], scores[best][0])


# Both heads may take a shift: a font's numerals move the value head as an ink moves the colour
# head (this font's 6 read as a 9), on faces not learnt yet as much as on learnt ones. The value
# head's shift (11 classes, few learnt dice of each) must fix kept-aside dice the base reader
# misread; one that only fits them better sharpened a W into a misread 10 on a tuning game.
VALUE_OPTIONS = tuple(_Option(bias, w) for bias in (False, True) for w in WEIGHTS)
COLOR_OPTIONS = VALUE_OPTIONS
