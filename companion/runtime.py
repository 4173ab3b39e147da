"""The application object: what `companion read` and `companion serve` make once at start and
pass down (the server's `create_app` takes it). The reading settings come from the environment,
then the command line's flags; the models are loaded here, so the first photo is read as fast as
the tenth, and every photo read or learnt from goes through this one reader.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the vision package is imported at start, never at import
    from companion.vision.dice_reader import DiceReader
    from companion.vision.settings import ReadSettings


class SettingsError(ValueError):
    """A COMPANION_* variable or a flag that is not understood (the message names it)."""


@dataclass(frozen=True)
class Runtime:
    """The reading settings and the dice reader made from them (None: it cannot read photos, and
    `reader_problem` says why; the scorepad works without it)."""

    read_settings: ReadSettings
    reader: DiceReader | None
    reader_problem: str = ""

    @classmethod
    def start(cls, environ: Mapping[str, str] | None = None, **flags: Any) -> Runtime:
        """Settings from `environ` (None: this process's environment) then the `flags` given (ReadSettings
        fields: cli.common.reader_flags), and the reader they name. Raises SettingsError for a setting
        that is not understood; models that cannot be loaded leave the reader None."""
        from companion.vision.settings import ReadSettings

        try:
            settings = replace(ReadSettings.from_env(os.environ if environ is None else environ), **flags)
        except ValueError as exc:
            raise SettingsError(str(exc)) from None
        return cls.with_settings(settings)

    @classmethod
    def with_settings(cls, settings: ReadSettings) -> Runtime:
        """The reader of these settings, loaded now (None, with the reason, when it cannot be)."""
        try:
            from companion.vision.dice_reader import DiceReader

            return cls(settings, DiceReader.load(settings))
        except (ImportError, RuntimeError, ValueError, OSError) as exc:  # ModelsMissing is a RuntimeError
            return cls(settings, None, str(exc))

    @classmethod
    def shipped(cls) -> Runtime:
        """The shipped settings and models, whatever the environment says (tests, embedding)."""
        from companion.vision.settings import ReadSettings

        return cls.with_settings(ReadSettings())
