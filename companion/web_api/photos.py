"""Photo uploads: the multipart field, a look at the header, and the dice reader.

The reader is the runtime's (companion/runtime.py), loaded when the server starts; without one
(no models) a photo gets a clear 503 and the scorepad works on.
"""

from __future__ import annotations

import dataclasses
import io
import logging
import threading
import warnings
from typing import TYPE_CHECKING

from flask import request
from werkzeug.exceptions import RequestEntityTooLarge

from companion.web_api.bodies import ApiError
from companion.web_api.settings import LIVE, MAX_PHOTO_BYTES

if TYPE_CHECKING:
    from companion.runtime import Runtime
    from companion.vision.dice_reader import DiceReader
    from companion.vision.settings import ReadSettings
    from companion.vision.profile import Profile
    from companion.vision.reading import Reading
    from companion.vision.tuning import HandLevels

log = logging.getLogger("companion.server")

# What phones send (MPO: the JPEG some cameras write). Pillow decodes many more formats; a
# photo upload need not reach their decoders.
PHOTO_FORMATS = frozenset({"JPEG", "MPO", "PNG", "WEBP"})


class PhotoReader:
    """Reads the dice in a photo with the runtime's reader, at most `slots` photos at once
    (decoding costs memory and a core each; more at once only queue for the CPU and hold more
    memory)."""

    def __init__(self, slots: int, runtime: Runtime):
        self._slots = threading.BoundedSemaphore(max(1, slots))
        self.runtime = runtime
        self._frames: DiceReader | None = None  # the runtime's reader, with frame_settings

    def __call__(self, data: bytes, profile: Profile | None = None, *, frame: bool = False) -> Reading:
        """The reading of a photo; with `frame`, of a live view's small frame (a quick look)."""
        from companion.vision import ImageError  # light: the error type only

        check_image(data)
        reader = self.runtime.reader
        if reader is None:
            raise ApiError(503, f"The dice reader is not available ({self.runtime.reader_problem}). "
                                "Enter the dice by hand.")
        try:
            with self._slots:
                return (self._frame_reader(reader) if frame else reader).read(data, profile)
        except ImageError as exc:
            raise ApiError(422, f"This photo cannot be read: {exc}. Nothing was changed.") from None
        except RuntimeError as exc:  # ModelsMissing and its kin: the reader, not the photo
            log.warning("dice reader failed: %s", exc)
            raise ApiError(503, f"The dice reader is not available ({exc}). Enter the dice by hand.") from None

    def hand_levels(self) -> HandLevels | None:
        """The hand levels of the runtime's reader's models (None: no reader, the shipped ones)."""
        reader = self.runtime.reader
        return reader.models.tuning.hand if reader is not None else None

    def _frame_reader(self, reader: DiceReader) -> DiceReader:
        """The same models with frame_settings (made once, for the runtime's reader)."""
        if self._frames is None or self._frames.models is not reader.models:
            self._frames = dataclasses.replace(reader, settings=frame_settings(reader.settings), learns=False)
        return self._frames


def frame_settings(settings: ReadSettings) -> ReadSettings:
    """The same reader and models for a live view's frames, without the passes that make a
    photo's reading exact: a frame only aims the camera and tells when the dice are still; the
    photo taken then is read in full. A 640-px frame reads in a third to a half of the time."""
    return dataclasses.replace(settings, zoom_small_faces=False, zoom_within_work=False, detector_views=1,
                               reader_turns=2, joint_colour=False)


def frame_shows_hand(data: bytes, reading: Reading, levels: HandLevels | None) -> bool:
    """Whether a hand is in a live view's frame, beside the dice its reading found (the page
    takes no photo while one is); `levels`: the reader's models' (tuning.HandLevels)."""
    import cv2
    import numpy as np

    from companion.vision.hand import hand_in_view

    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if image is None:  # the reader decoded it; OpenCV could not: no evidence of a hand
        return False
    return hand_in_view(image, [die.box for die in reading.dice], reading.width / image.shape[1], levels)


def check_image(data: bytes) -> None:
    """Refuse what is plainly not an image, or would cost too much to decode, before any
    model is loaded (reads the header only)."""
    from PIL import Image, UnidentifiedImageError

    from companion.vision import ImageError
    from companion.vision.image_io import check_size
    from companion.vision.reading import HEIC_ADVICE, is_heic

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # check_size decides
            with Image.open(io.BytesIO(data)) as image:
                if image.format not in PHOTO_FORMATS:
                    raise UnidentifiedImageError(image.format)  # a format Pillow knows, but no photo's
                check_size(image)
    except ImageError as exc:
        raise ApiError(422, f"This photo cannot be read: {exc}. Nothing was changed; send a smaller photo.") from None
    except Image.DecompressionBombError:
        limit = 2 * (Image.MAX_IMAGE_PIXELS or 0) / 1e6
        raise ApiError(422, f"This photo cannot be read: it has more than {limit:.0f} MP, too large to decode "
                            "safely. Nothing was changed; send a smaller photo.") from None
    except UnidentifiedImageError:
        if is_heic(data[:12]):
            raise ApiError(422, f"This is {HEIC_ADVICE}. Nothing was changed.") from None
        raise ApiError(422, "This file is not a photo (JPEG, PNG or WebP expected). Nothing was changed.") from None
    except Exception:  # noqa: BLE001 - any header Pillow cannot parse is a broken image
        raise ApiError(422, "This photo is broken: its header cannot be read. Nothing was changed.") from None


def check_frame_size(data: bytes) -> None:
    """A live view's frame is small: a larger image is a photo, sent to the wrong place."""
    from PIL import Image

    most = 2 * LIVE.frame_long_side
    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
    except Exception:  # noqa: BLE001 - the reader says why it cannot read it
        return
    if max(width, height) > most:
        raise ApiError(422, f"A live view's frame may be at most {most} px on its long side, not "
                            f"{max(width, height)}; send a photo to the photo upload. Nothing was changed.")


def uploaded_photo(limit: int = MAX_PHOTO_BYTES) -> tuple[bytes, str]:
    """The bytes of the multipart field "photo" (at most `limit`) and the type they really are."""
    try:
        upload = request.files.get("photo")
    except RequestEntityTooLarge:
        if (request.content_length or 0) > (request.max_content_length or 0):
            raise
        # within the size limit: too many fields (the form parts limit)
        raise ApiError(400, "send the photo alone, as multipart/form-data in the field \"photo\"") from None
    if upload is None:
        raise ApiError(400, "send the photo as multipart/form-data in the field \"photo\"")
    data = upload.read(limit + 1)
    if len(data) > limit:
        if limit < MAX_PHOTO_BYTES:
            raise ApiError(413, f"A live view's frame (or the photo it holds) may be at most {limit // 1024} KB. "
                                "Nothing was changed.")
        raise RequestEntityTooLarge()
    if not data:
        raise ApiError(422, "The photo is empty. Nothing was changed.")
    return data, _sniff_mime(data, upload.mimetype)


def _sniff_mime(data: bytes, declared: str | None) -> str:
    """The type the bytes are (Pillow's reading of the header), not what the client claimed."""
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # check_image decides
            with Image.open(io.BytesIO(data)) as image:
                return Image.MIME.get(image.format or "", "application/octet-stream")
    except Exception:  # noqa: BLE001 - the reader refuses it later with a clear message
        return declared if declared and declared.startswith("image/") else "application/octet-stream"
