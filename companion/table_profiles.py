"""The scorepad's dice-set profiles: what each set learnt from its confirmed photos.

Ties the store (SQLite: which photos each set learnt from, each photo's learnt dice) to the
vision side (companion/vision/learn.py, profile.py), so the web layer only calls these:

- learn(photo_id, set_id): after an attempt with a photo is confirmed, its dice (the boxes
  read, the faces as confirmed) are learnt and recorded for the game's set;
- profile(set_id): the set's profile for reading its next photos (None while nothing is
  learnt), built from the recorded photos and kept until they change;
- undoing the attempt deletes its photo's record (Store.undo_last), reset forgets the set's.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from companion.dice import Color, Face
from companion.store import DiceSetRecord, Store
from companion.vision.dice_reader import DiceReader
from companion.vision.learn import ConfirmedDie, embedding_width
from companion.vision.profile import Learnt, Profile, ProfileError

log = logging.getLogger("companion.server")


@dataclass(frozen=True, slots=True)
class SetSummary:
    """What the page shows about a set: "learnt from 24 dice of this set"."""

    id: int
    name: str
    dice: int  # dice learnt that the reader can use
    photos: int
    in_use: bool  # the guard lets what was learnt change readings
    damaged: int = 0  # photos whose stored learning is damaged: never counted as learnt
    learnt: tuple[Learnt, ...] = ()  # per ink, then per value

    def to_json(self) -> dict:
        return {"id": self.id, "name": self.name, "dice": self.dice, "photos": self.photos, "in_use": self.in_use,
                "damaged": self.damaged, "learnt": [item.to_json() for item in self.learnt]}


@dataclass(frozen=True, slots=True)
class _Learnt:
    """A set's learnt photos as the reader can use them (kept until the photos change)."""

    profile: Profile | None
    dice: int
    photos: int
    damaged: int


class ReaderMissing(RuntimeError):
    """There is no dice reader to learn with (the runtime could not load its models)."""


class TableProfiles:
    """The sets' profiles, learnt and read with `reader` (None: the server cannot read photos)."""

    def __init__(self, store: Store, reader: DiceReader | None):
        self.store = store
        self.reader = reader
        self._cache: dict[int, tuple[tuple[int, ...], _Learnt]] = {}
        self._reported: set[int] = set()  # damaged photos already in the log
        self._lock = threading.Lock()

    def learn(self, photo_id: int, set_id: int) -> int:
        """Learn a confirmed photo's boxed dice into set `set_id`; returns how many were learnt."""
        photo = self.store.get_photo(photo_id)
        dice = confirmed_dice(photo.labels)
        if not dice:
            return 0
        learnt = self._reader().learn(None, photo_name(photo_id), photo.data, dice)
        self.store.learn_photo(photo_id, set_id, len(learnt), learnt.to_bytes())
        return len(learnt)

    def profile(self, set_id: int) -> Profile | None:
        """The set's profile (None while it learnt nothing the reader can use)."""
        return self._learnt(set_id).profile

    def _learnt(self, set_id: int) -> _Learnt:
        ids = self.store.learnt_photo_ids(set_id)
        with self._lock:
            cached = self._cache.get(set_id)
            if cached is not None and cached[0] == ids:
                return cached[1]
        learnt = self._build(set_id, cached[1].profile if cached is not None else None) if ids else _Learnt(None, 0, 0, 0)
        with self._lock:
            self._cache[set_id] = (ids, learnt)
        return learnt

    def _reader(self) -> DiceReader:
        if self.reader is None:
            raise ReaderMissing("there is no dice reader to learn with")
        return self.reader

    def _build(self, set_id: int, previous: Profile | None = None) -> _Learnt:
        """The set's profile from its recorded photos (`previous`: the one built before, whose
        checks of the photos still there are not redone)."""
        models = self._reader().models
        reader, width = models.reader.fingerprint, embedding_width(models)
        parts, damaged = [], 0
        for photo_id, data in self.store.learnt_photos(set_id):
            try:
                part = Profile.from_bytes(data, photo_name(photo_id))
                if reader and part.reader != reader:
                    continue  # learnt with an earlier reader: it cannot help this one, and is not damaged
                if part.dim != width:
                    raise ProfileError(f"{photo_name(photo_id)} is damaged: its embeddings have {part.dim} values, "
                                       f"the reader's {width}")
            except ProfileError as exc:
                damaged += 1
                self._report(photo_id, set_id, exc)
                continue
            parts.append(part)
        profile = Profile.merged(reader, width, parts, previous) if parts else None
        return _Learnt(profile, sum(len(p) for p in parts), len(parts), damaged)

    def _report(self, photo_id: int, set_id: int, exc: ProfileError) -> None:
        with self._lock:
            if photo_id in self._reported:
                return
            self._reported.add(photo_id)
        log.warning("dice set %s: what photo %s taught cannot be used (%s); reset the set or confirm the "
                    "photo again to learn it anew", set_id, photo_id, exc)

    def summary(self, set_id: int | None) -> SetSummary:
        record: DiceSetRecord = self.store.dice_set(set_id)
        if not record.dice and not record.photos:
            return SetSummary(record.id, record.name, 0, 0, False)
        try:
            learnt = self._learnt(record.id)
        except Exception:  # noqa: BLE001 - no reader here (models missing): the card still shows
            log.exception("the dice set %s's learning cannot be checked", record.id)
            return SetSummary(record.id, record.name, record.dice, record.photos, False)
        profile = learnt.profile
        return SetSummary(record.id, record.name, learnt.dice, learnt.photos,
                          bool(profile is not None and profile.blend.active), learnt.damaged,
                          tuple(profile.learnt()) if profile is not None else ())


def photo_name(photo_id: int) -> str:
    return f"photo {photo_id}"


def confirmed_dice(labels) -> list[ConfirmedDie]:
    """The boxed dice of a photo's confirmed labels (companion/web_api/games.py: photo_labels),
    a die typed in by hand with the place the player pointed at among them; a die typed in
    without a place has no box and teaches nothing. A die counts as checked when the labels
    say so, or when it was corrected or pointed at; labels stored before the page recorded
    what was checked leave the rest unchecked: confirmed, but the reader's own guess."""
    if not isinstance(labels, dict):
        return []
    out = []
    for die in labels.get("dice", []):
        box = die.get("box")
        if not box:
            continue
        value = None if die.get("value") == "W" else int(die["value"])
        x0, y0, x1, y1 = (float(v) for v in box)
        checked = bool(die.get("checked") or die.get("corrected") or die.get("pointed"))
        out.append(ConfirmedDie(Face(value, Color.parse(die["color"])), (x0, y0, x1, y1), checked))
    return out
