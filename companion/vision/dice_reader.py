"""The dice reader a process uses: the models of one folder and the settings they read with, made
once at start (`companion read`, `companion serve`: companion/runtime.py) and passed down, so that
every photo read and every photo learnt from goes through the same reader."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from companion.vision.learn import ConfirmedDie, learn_photo
from companion.vision.models import Models, load_models
from companion.vision.pipeline import read_learnable
from companion.vision.read_features import RecentReadings
from companion.vision.profile import Profile
from companion.vision.reading import Reading
from companion.vision.settings import ReadSettings


@dataclass(frozen=True)
class DiceReader:
    models: Models
    settings: ReadSettings = ReadSettings()
    # the photos read are learnt from once confirmed: what their readings computed of each die is
    # kept for the latest few (read_features.py); False: a live view's frames, never learnt
    learns: bool = True
    recent: RecentReadings = field(default_factory=RecentReadings, init=False, repr=False, compare=False)

    @classmethod
    def load(cls, settings: ReadSettings = ReadSettings()) -> DiceReader:
        """The models the settings name, loaded now (raises ModelsMissing, or ValueError for a
        folder whose files do not fit together)."""
        return cls(load_models(settings.models_dir, settings.providers), settings)

    @property
    def fingerprint(self) -> str:
        """Names the reader's file: a profile learnt by another reader does not fit this one."""
        return self.models.reader.fingerprint

    def read(self, source: bytes | str | os.PathLike[str], profile: Profile | None = None) -> Reading:
        """Every die in a photo (vision.pipeline.read_image, with these models and settings)."""
        reading, features = read_learnable(source, self.models, self.settings, profile, self.learns)
        if isinstance(source, bytes):
            self.recent.keep(source, features)
        return reading

    def learn(self, profile: Profile | None, photo: str, source: bytes | str | os.PathLike[str],
              dice: Sequence[ConfirmedDie]) -> Profile:
        """`profile` with one confirmed photo's dice added (vision.learn.learn_photo)."""
        seen = self.recent.get(source) if isinstance(source, bytes) else None
        return learn_photo(profile, photo, source, dice, self.models, self.settings, seen)
