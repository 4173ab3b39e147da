"""Photo uploads: the multipart field, a look at the header, and the dice reader.

The reader is the runtime's (companion/runtime.py), loaded when the server starts; without one
(no models) a photo gets a clear 503 and the scorepad works on.
"""

from __future__ import annotations

import io
import logging
import threading
import warnings
from typing import TYPE_CHECKING

from flask import request
from werkzeug.exceptions import RequestEntityTooLarge

from companion.web_api.bodies import ApiError
from companion.web_api.settings import MAX_PHOTO_BYTES

if TYPE_CHECKING:
    from companion.runtime import Runtime
    from companion.vision.profile import Profile
    from companion.vision.reading import Reading

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

    def __call__(self, data: bytes, profile: Profile | None = None) -> Reading:
        from companion.vision import ImageError  # light: the error type only

        check_image(data)
        reader = self.runtime.reader
        if reader is None:
            raise ApiError(503, f"The dice reader is not available ({self.runtime.reader_problem}). "
                                "Enter the dice by hand.")
        try:
            with self._slots:
                return reader.read(data, profile)
        except ImageError as exc:
            raise ApiError(422, f"This photo cannot be read: {exc}. Nothing was changed.") from None
        except RuntimeError as exc:  # ModelsMissing and its kin: the reader, not the photo
            log.warning("dice reader failed: %s", exc)
            raise ApiError(503, f"The dice reader is not available ({exc}). Enter the dice by hand.") from None


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


def uploaded_photo() -> tuple[bytes, str]:
    """The bytes of the multipart field "photo" and the type they really are."""
    try:
        upload = request.files.get("photo")
    except RequestEntityTooLarge:
        if (request.content_length or 0) > (request.max_content_length or 0):
            raise
        # within the size limit: too many fields (the form parts limit)
        raise ApiError(400, "send the photo alone, as multipart/form-data in the field \"photo\"") from None
    if upload is None:
        raise ApiError(400, "send the photo as multipart/form-data in the field \"photo\"")
    data = upload.read(MAX_PHOTO_BYTES + 1)
    if len(data) > MAX_PHOTO_BYTES:
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
