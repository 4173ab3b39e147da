"""Loading photos safely and fast: size limits, JPEG draft decoding, EXIF orientation.

A phone photo is 12 MP or more, but the models need far less: JPEGs are decoded at a
reduced scale (libjpeg's DCT scaling, Pillow's ``draft``), which is several times faster
than a full decode. Every box is mapped back to the upright full-size photo.
"""

from __future__ import annotations

import io
import os
import warnings
from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from companion.vision.reading import ImageError

# The working image's long side: what the reader crops from and the detector shrinks.
# 960 lets a 12 MP JPEG (4000 or 4032 px wide) decode at 1/4 scale and 48 MP at 1/8.
WORK_LONG_SIDE = 960
MAX_BYTES = 100 * 1024 * 1024  # a phone photo is a few MB; refuse before reading more
MAX_PIXELS = 100_000_000  # 100 MP: above this a decode could take gigabytes of memory
_ORIENTATION_TAG = 0x0112
_SWAPPING_ORIENTATIONS = (5, 6, 7, 8)  # the EXIF orientations that turn the photo by 90 degrees


@dataclass(frozen=True, slots=True)
class WorkImage:
    """The upright photo at working size (RGB, uint8) and how it maps to the full-size photo."""

    rgb: np.ndarray  # (h, w, 3) uint8, upright
    full_width: int  # the upright photo's full size
    full_height: int
    # what it was loaded from (a path or the file's bytes), so that a sharper copy can be
    # decoded when the dice turn out small (load_detail); None: no sharper copy to be had
    source: bytes | str | None = None

    @property
    def long_side(self) -> int:
        return max(self.rgb.shape[:2])

    @property
    def scale_x(self) -> float:
        return self.full_width / self.rgb.shape[1]

    @property
    def scale_y(self) -> float:
        return self.full_height / self.rgb.shape[0]

    def to_full(self, box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
        x0, y0, x1, y1 = box
        sx, sy = self.scale_x, self.scale_y
        return (x0 * sx, y0 * sy, x1 * sx, y1 * sy)

    def to_work(self, box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
        """The inverse of to_full: a box in full-size photo pixels, in this image's pixels."""
        x0, y0, x1, y1 = box
        sx, sy = self.scale_x, self.scale_y
        return (x0 / sx, y0 / sy, x1 / sx, y1 / sy)


def _open(source: bytes | str | os.PathLike) -> Image.Image:
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        if len(data) > MAX_BYTES:
            raise ImageError(f"image is {len(data) / 2**20:.0f} MB, more than the {MAX_BYTES // 2**20} MB limit")
        if not data:
            raise ImageError("not an image: the data is empty")
        stream: io.BytesIO | str = io.BytesIO(data)
        name = "image data"
    else:
        path = os.fspath(source)
        name = path
        try:
            size = os.stat(path).st_size
        except OSError as exc:
            raise ImageError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
        if size > MAX_BYTES:
            raise ImageError(f"{path}: file is {size / 2**20:.0f} MB, more than the {MAX_BYTES // 2**20} MB limit")
        if size == 0:
            raise ImageError(f"{path}: not an image (the file is empty)")
        stream = path
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(stream)
    except UnidentifiedImageError:
        raise ImageError(f"{name}: not an image (JPEG, PNG or WebP expected)") from None
    except Image.DecompressionBombError:
        raise ImageError(f"{name}: image too large to decode safely") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise ImageError(f"{name}: broken image ({exc})") from None
    width, height = image.size
    if width <= 0 or height <= 0:
        raise ImageError(f"{name}: broken image (size {width}x{height})")
    if width * height > MAX_PIXELS:
        image.close()
        raise ImageError(
            f"{name}: image is {width}x{height} ({width * height / 1e6:.0f} MP), too large to decode "
            f"safely (limit {MAX_PIXELS / 1e6:.0f} MP)"
        )
    return image


def _orientation(image: Image.Image) -> int:
    try:
        return int(image.getexif().get(_ORIENTATION_TAG, 1) or 1)
    except Exception:  # a broken EXIF block must not lose the photo: treat it as upright
        return 1


def _decode(image: Image.Image, name: str, long_side: int | None) -> tuple[Image.Image, int, int]:
    """Decode (at reduced scale where the format allows) and turn upright; return full upright size."""
    width, height = image.size
    swapped = _orientation(image) in _SWAPPING_ORIENTATIONS
    full_w, full_h = (height, width) if swapped else (width, height)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            if long_side is not None and image.format == "JPEG" and max(width, height) > long_side:
                k = long_side / max(width, height)
                # draft keeps the decoded size at least the requested size: never below long_side
                image.draft("RGB", (max(1, int(np.ceil(width * k))), max(1, int(np.ceil(height * k)))))
            image.load()
            try:
                upright = ImageOps.exif_transpose(image)
            except Exception:  # a broken EXIF block: keep the stored orientation
                upright = image
            rgb = upright.convert("RGB")
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError, MemoryError) as exc:
        raise ImageError(f"{name}: broken image ({exc})") from None
    return rgb, full_w, full_h


def load_work_image(source: bytes | str | os.PathLike, long_side: int = WORK_LONG_SIDE) -> WorkImage:
    """Load a photo as an upright RGB array with its long side at most `long_side`."""
    raw = isinstance(source, (bytes, bytearray, memoryview))
    source = bytes(source) if raw else os.fspath(source)
    name = "image data" if raw else source
    image = _open(source)
    try:
        rgb_image, full_w, full_h = _decode(image, name, long_side)
        rgb = np.asarray(rgb_image)
    finally:
        image.close()
    h, w = rgb.shape[:2]
    if max(h, w) > long_side:
        k = long_side / max(h, w)
        size = (max(1, round(w * k)), max(1, round(h * k)))
        rgb = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
    return WorkImage(np.ascontiguousarray(rgb), full_w, full_h, source)


def load_detail(work: WorkImage, long_side: int) -> WorkImage:
    """The same photo decoded again, sharper (long side up to `long_side`), or `work` itself
    when the photo has no more pixels to give."""
    target = min(long_side, max(work.full_width, work.full_height))
    if work.source is None or target <= work.long_side * 1.2:
        return work
    return load_work_image(work.source, target)


def load_full_image(source: bytes | str | os.PathLike) -> Image.Image:
    """The upright photo at full size (for drawing annotations), with the same safety limits."""
    name = "image data" if isinstance(source, (bytes, bytearray, memoryview)) else os.fspath(source)
    image = _open(source)
    try:
        rgb, _, _ = _decode(image, name, None)
    finally:
        image.close()
    return rgb
