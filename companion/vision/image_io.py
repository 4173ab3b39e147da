"""Loading photos safely and fast: size limits, JPEG draft decoding, EXIF orientation.

A phone photo is 12 MP or more, but the models need far less: JPEGs are decoded at a
reduced scale (libjpeg's DCT scaling, Pillow's ``draft``), which is several times faster
than a full decode. Every box is mapped back to the upright full-size photo.

Reading the compressed data takes most of a decode's time whatever the scale, so a photo
is decoded once, at up to MAX_DETAIL times the working size, and that sharper copy is kept
for when the dice turn out small (load_detail) instead of decoding the file again.

A baseline colour JPEG is decoded by OpenCV's libjpeg-turbo straight into an array, with the
same DCT scaling and the same pixels as Pillow's: Pillow holds RGB pixels in four bytes each,
and halving its image and making an array of it cost 5-6 ms more a 12 MP read than halving
the array. Any other image, or a JPEG OpenCV cannot decode whole, is decoded by Pillow.
"""

from __future__ import annotations

import io
import os
import warnings
from collections.abc import Callable
from typing import Any
from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image, UnidentifiedImageError

from companion.vision.reading import HEIC_ADVICE, ImageError, is_heic

# The working image's long side: what the reader crops from and the detector shrinks.
# 960 lets a 12 MP JPEG (4000 or 4032 px wide) decode at 1/4 scale and 48 MP at 1/8.
WORK_LONG_SIDE = 960
MAX_BYTES = 100 * 1024 * 1024  # a phone photo is a few MB; refuse before reading more
# What one decode may cost. A baseline JPEG decodes at 1/2..1/8 scale (draft) a few rows
# at a time, so even 100 MP costs about 100 MB. PNG, WebP and progressive JPEG (libjpeg
# holds all of its coefficients) decode whole: their pixel count is the cost, about 3 bytes
# each and once more to convert, so they get a budget of twice a 12 MP phone photo.
MAX_PIXELS = 100_000_000  # a baseline JPEG
MAX_FULL_DECODE_PIXELS = 24_000_000  # PNG, WebP, progressive JPEG and the rest
# a phone's multi-picture file (MPO) is a JPEG whose first picture Pillow decodes with the same
# DCT scaling
JPEG_FORMATS = ("JPEG", "MPO")
_ORIENTATION_TAG = 0x0112
_SWAPPING_ORIENTATIONS = (5, 6, 7, 8)  # the EXIF orientations that turn the photo by 90 degrees
# The sharpest copy kept, as a multiple of the working size: a 12 MP JPEG then decodes at
# half scale, about as fast as at quarter scale.
MAX_DETAIL = 2.0
# The working image's last shrink is bilinear when it keeps at least this share of the size
# (as a 12 MP photo's quarter scale to WORK_LONG_SIDE), by area otherwise.
NEAR_SCALE = 0.9
# A sharper copy must have at least this many times the working size's pixels per side
# to be worth keeping.
MIN_DETAIL = 1.2
# A sharper copy at most this many times the size asked for is given as it is (load_detail): a
# 12 MP JPEG's half scale (2000 px) for 1920. Its faces are then 4 % larger than asked for, and the
# detector's input, shrunk from it in one step, is as large as asked; a resample by area to the size
# asked for would cost a tenth of a far photo's read.
NEAR_DETAIL = 1.1


class Detail:
    """The photo decoded sharper than the working image, made an array only when it is asked
    for: most photos never need it, and turning Pillow's pixels into an array costs about a
    tenth of a read at 12 MP's half scale."""

    __slots__ = ("_image", "_array")

    def __init__(self, pixels: Image.Image | np.ndarray) -> None:
        self._image: Image.Image | None = pixels if isinstance(pixels, Image.Image) else None
        self._array: np.ndarray | None = None if isinstance(pixels, Image.Image) else np.ascontiguousarray(pixels)

    @property
    def shape(self) -> tuple[int, ...]:
        if self._image is not None:
            return (self._image.height, self._image.width, 3)
        return self.array().shape

    def array(self) -> np.ndarray:
        """The pixels (h, w, 3) uint8, made once."""
        if self._array is None:
            image = self._image
            if image is not None:  # else another thread made the array meanwhile (before dropping this)
                self._array = np.asarray(image)
                self._image = None
        assert self._array is not None
        return self._array

    def __getitem__(self, index: Any) -> Any:
        return self.array()[index]


@dataclass(frozen=True, slots=True)
class WorkImage:
    """The upright photo at working size (RGB, uint8) and how it maps to the full-size photo."""

    rgb: np.ndarray  # (h, w, 3) uint8, upright
    full_width: int  # the upright photo's full size
    full_height: int
    # the same photo decoded sharper (up to MAX_DETAIL x the working size), for when the
    # dice turn out small (load_detail); None: the photo has no more pixels to give
    detail: Detail | None = None

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
        if is_heic(_head(stream)):
            raise ImageError(f"{name}: {HEIC_ADVICE}") from None
        raise ImageError(f"{name}: not an image (JPEG, PNG or WebP expected)") from None
    except Image.DecompressionBombError:
        raise ImageError(f"{name}: image too large to decode safely") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise ImageError(f"{name}: broken image ({exc})") from None
    try:
        check_size(image)
    except ImageError as exc:
        image.close()
        raise ImageError(f"{name}: {exc}") from None
    return image


def check_size(image: Image.Image) -> None:
    """Refuse, from the header alone, a photo whose decode would cost more than its budget."""
    width, height = image.size
    if width <= 0 or height <= 0:
        raise ImageError(f"broken image (size {width}x{height})")
    scaled = image.format in JPEG_FORMATS and not image.info.get("progressive")
    limit = MAX_PIXELS if scaled else MAX_FULL_DECODE_PIXELS
    if width * height > limit:
        kind = "JPEG photo" if scaled else f"{'progressive JPEG' if image.format == 'JPEG' else image.format} image"
        raise ImageError(
            f"image is {width}x{height} ({width * height / 1e6:.0f} MP), too large to decode safely: "
            f"a {kind} may have at most {limit / 1e6:.0f} MP"
        )


def _head(stream: io.BytesIO | str) -> bytes:
    """The first bytes, enough to tell an HEIC photo (empty if the file cannot be read again)."""
    if isinstance(stream, io.BytesIO):
        return stream.getvalue()[:12]
    try:
        with open(stream, "rb") as file:
            return file.read(12)
    except OSError:
        return b""


def _orientation(image: Image.Image) -> int:
    try:
        return int(image.getexif().get(_ORIENTATION_TAG, 1) or 1)
    except Exception:  # a broken EXIF block must not lose the photo: treat it as upright
        return 1


def _decode(
    image: Image.Image, name: str, long_side: int | None, source: bytes | str | None = None
) -> tuple[Image.Image | np.ndarray, int, int]:
    """Decode (at reduced scale where the format allows) and turn upright; return full upright size.

    `source` (the photo's bytes or path): a baseline colour JPEG is then decoded by OpenCV into
    an (h, w, 3) array (_jpeg_array); else, and when that fails, Pillow decodes it into an image.
    A photo that needs neither turning nor converting is not copied (12 ms at 12 MP's half
    scale): the image returned then holds the same pixels, and `image` can still be closed."""
    width, height = image.size
    if source is not None and image.format in JPEG_FORMATS:
        source = source if isinstance(source, bytes) else _read(source)  # read once, for both
        _check_scan(source, width, height, name)
    orientation = _orientation(image)
    swapped = orientation in _SWAPPING_ORIENTATIONS
    full_w, full_h = (height, width) if swapped else (width, height)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            if long_side is not None and image.format in JPEG_FORMATS and max(width, height) > long_side:
                k = long_side / max(width, height)
                # draft keeps the decoded size at least the requested size: never below long_side
                image.draft("RGB", (max(1, int(np.ceil(width * k))), max(1, int(np.ceil(height * k)))))
            # OpenCV's array only where Pillow's image would not be shrunk by blocks below (a side
            # the draft leaves at twice the size asked for): there the two would differ
            direct = long_side is None or max(image.size) < 2 * long_side
            pixels = None if source is None or not direct else _jpeg_array(image, source, (width, height), orientation)
            if pixels is not None:
                return pixels, full_w, full_h
            image.load()
            if long_side is not None and max(image.size) >= 2 * long_side:
                # Decoded whole (not a JPEG): shrink by whole pixels before converting or
                # copying it, so that the full-size pixels are held once, not three times.
                upright = _transpose(_reduce(image, max(image.size) // long_side), orientation)
            else:
                upright = _transpose(image, orientation)  # as ImageOps.exif_transpose, without its copy
            rgb = upright if upright.mode == "RGB" else upright.convert("RGB")
            if rgb is image:  # a second Image on the same pixels, so that closing `image` keeps them
                rgb = image._new(image.im)
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError, MemoryError) as exc:
        raise ImageError(f"{name}: broken image ({exc})") from None
    return rgb, full_w, full_h


# OpenCV's flags for libjpeg's DCT scaling (1/scale each way), as Pillow's draft chooses it: only
# the scale bits of these flags are used (the colour bits are OR-ed in by _jpeg_array)
_CV_SCALES = {1: 0, 2: cv2.IMREAD_REDUCED_GRAYSCALE_2, 4: cv2.IMREAD_REDUCED_GRAYSCALE_4,
              8: cv2.IMREAD_REDUCED_GRAYSCALE_8}
_CV_RGB = getattr(cv2, "IMREAD_COLOR_RGB", None)  # OpenCV 4.10 and later decode to RGB order directly


def _jpeg_array(image: Image.Image, source: bytes | str, stored: tuple[int, int], orientation: int) -> np.ndarray | None:
    """A baseline colour JPEG (`image`: opened, its draft chosen) decoded by OpenCV at the scale
    the draft chose, turned upright, as an (h, w, 3) RGB array; None for any other image, or when
    OpenCV cannot decode it (a truncated or corrupt file: Pillow then decodes it, or says why not).
    `stored`: the photo's size as stored, before the draft."""
    if image.format != "JPEG" or image.mode != "RGB" or image.info.get("progressive"):
        return None
    width, height = stored
    scale = next((s for s in _CV_SCALES if image.size == (-(-width // s), -(-height // s))), None)
    if scale is None:
        return None
    try:
        data = source if isinstance(source, bytes) else _read(source)
        flags = _CV_SCALES[scale] | cv2.IMREAD_IGNORE_ORIENTATION
        pixels = cv2.imdecode(np.frombuffer(data, np.uint8), flags | (_CV_RGB if _CV_RGB is not None else cv2.IMREAD_COLOR))
    except (OSError, cv2.error):
        return None
    if pixels is None or pixels.shape != (image.height, image.width, 3):
        return None
    if _CV_RGB is None:
        pixels = cv2.cvtColor(pixels, cv2.COLOR_BGR2RGB)
    turn = _TURN_ARRAY.get(orientation)
    return pixels if turn is None else turn(pixels)


_BASELINE_SOF = (0xC0, 0xC1)  # Huffman-coded, sequential: one scan holds every block
_STANDALONE = frozenset({0x01, *range(0xD0, 0xD9)})  # markers without a length


def _check_scan(data: bytes, width: int, height: int, name: str) -> None:
    """ImageError for a baseline JPEG whose image data is too short to hold its pixels. Its scan
    codes every 8x8 block of the luma in at least 2 bits (a DC code and an end-of-block code,
    1 bit each at the shortest), so fewer bytes than a quarter of its blocks is a file cut
    short, or a header with no image: libjpeg would fill the missing rows with grey."""
    coding, scan = _scan_start(data)
    if coding not in _BASELINE_SOF or scan is None:
        return
    blocks = -(-width // 8) * -(-height // 8)
    if (len(data) - scan) * 4 < blocks:
        raise ImageError(f"{name}: broken image (its {width}x{height} pixels need at least {blocks // 4} bytes of "
                         f"image data, it holds {len(data) - scan}: the file is cut short)")


def _scan_start(data: bytes) -> tuple[int | None, int | None]:
    """The JPEG's frame marker (SOF0, SOF2...) and where its first scan's data begins."""
    coding, at = None, 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return coding, None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in _STANDALONE:
            at += 2
            continue
        length = int.from_bytes(data[at + 2:at + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC) and coding is None:
            coding = marker
        if marker == 0xDA:
            return coding, at + 2 + length
        at += 2 + length
    return coding, None


def _read(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


# the EXIF orientations' turns of an array, as _TRANSPOSE's of an image
_TURN_ARRAY: dict[int, Callable[[np.ndarray], np.ndarray]] = {
    2: lambda a: cv2.flip(a, 1), 3: lambda a: cv2.rotate(a, cv2.ROTATE_180), 4: lambda a: cv2.flip(a, 0),
    5: cv2.transpose, 6: lambda a: cv2.rotate(a, cv2.ROTATE_90_CLOCKWISE),
    7: lambda a: cv2.rotate(cv2.transpose(a), cv2.ROTATE_180), 8: lambda a: cv2.rotate(a, cv2.ROTATE_90_COUNTERCLOCKWISE)}
_TRANSPOSE = {2: Image.Transpose.FLIP_LEFT_RIGHT, 3: Image.Transpose.ROTATE_180,
              4: Image.Transpose.FLIP_TOP_BOTTOM, 5: Image.Transpose.TRANSPOSE, 6: Image.Transpose.ROTATE_270,
              7: Image.Transpose.TRANSVERSE, 8: Image.Transpose.ROTATE_90}  # as ImageOps.exif_transpose
_REDUCIBLE = ("L", "LA", "RGB", "RGBA", "RGBX", "CMYK", "I", "F")


def _reduce(image: Image.Image, factor: int) -> Image.Image:
    """The image shrunk `factor` times by averaging blocks (Pillow's reduce)."""
    if image.mode not in _REDUCIBLE:  # 1-bit, palette: as RGB first (bounded by the budget)
        image = image.convert("RGBA" if "transparency" in image.info or image.mode == "PA" else "RGB")
    return image.reduce(factor)


def _transpose(image: Image.Image, orientation: int) -> Image.Image:
    method = _TRANSPOSE.get(orientation)
    return image if method is None else image.transpose(method)


def load_work_image(source: bytes | str | os.PathLike, long_side: int = WORK_LONG_SIDE) -> WorkImage:
    """Load a photo as an upright RGB array with its long side at most `long_side`, keeping
    a sharper copy when the photo has the pixels."""
    raw = isinstance(source, (bytes, bytearray, memoryview))
    source = bytes(source) if isinstance(source, (bytes, bytearray, memoryview)) else os.fspath(source)
    name = "image data" if raw else str(source)
    image = _open(source)
    try:
        decoded, full_w, full_h = _decode(image, name, round(long_side * MAX_DETAIL), source)
    finally:
        image.close()
    rgb = _shrink(_halved(decoded, long_side), long_side, NEAR_SCALE)
    sharpest = max(decoded.shape[:2]) if isinstance(decoded, np.ndarray) else max(decoded.size)
    if sharpest < long_side * MIN_DETAIL:
        return WorkImage(rgb, full_w, full_h)
    # a JPEG decodes at a DCT scale just above the size asked for: kept as it is, so that
    # load_detail resamples only once
    if sharpest <= long_side * MAX_DETAIL * 1.25:
        return WorkImage(rgb, full_w, full_h, Detail(decoded))
    return WorkImage(rgb, full_w, full_h, Detail(_shrink(np.asarray(decoded), round(long_side * MAX_DETAIL))))


def _halved(image: Image.Image | np.ndarray, long_side: int) -> np.ndarray:
    """The image as an array, halved (2 x 2 pixel means) while its long side is at least twice
    `long_side`: as _shrink's halving, done (for an image) before the array is made so that the
    full-size pixels are never copied. Pillow's reduce(2) and OpenCV's INTER_AREA halving give
    the same pixels when both sides are even; an odd side is left to _shrink."""
    if isinstance(image, np.ndarray):
        h, w = image.shape[:2]
        while max(h, w) >= 2 * long_side and h % 2 == 0 and w % 2 == 0:
            image = cv2.resize(image, (w // 2, h // 2), interpolation=cv2.INTER_AREA)
            h, w = image.shape[:2]
        return image
    while max(image.size) >= 2 * long_side and image.width % 2 == 0 and image.height % 2 == 0:
        image = image.reduce(2)
    return np.asarray(image)


def _shrink(rgb: np.ndarray, long_side: int, near: float = 1.0) -> np.ndarray:
    """The image with its long side at most `long_side`: halved by area while it is twice as
    long, then shrunk by area, or bilinearly when that last step keeps at least `near` of the
    size (at 12 MP's 1000 px to 960, 4 times as fast, and it samples every pixel all the same)."""
    h, w = rgb.shape[:2]
    if max(h, w) <= long_side:
        return np.ascontiguousarray(rgb)
    while max(h, w) >= 2 * long_side:  # halving by area is a fast path, and looks the same
        rgb = cv2.resize(rgb, (w // 2, h // 2), interpolation=cv2.INTER_AREA)
        h, w = rgb.shape[:2]
    if max(h, w) <= long_side:
        return rgb
    k = long_side / max(h, w)
    how = cv2.INTER_LINEAR if k >= near else cv2.INTER_AREA
    return cv2.resize(rgb, (max(1, round(w * k)), max(1, round(h * k))), interpolation=how)


def load_detail(work: WorkImage, long_side: int) -> WorkImage:
    """The same photo, sharper (long side up to `long_side`, or up to NEAR_DETAIL times that
    when the copy kept at loading is no larger), or `work` itself when the photo has no more
    pixels to give."""
    if work.detail is None or long_side < work.long_side * MIN_DETAIL:
        return work
    detail = work.detail.array()
    if max(detail.shape[:2]) <= long_side * NEAR_DETAIL:
        return WorkImage(detail, work.full_width, work.full_height, work.detail)
    return WorkImage(_shrink(detail, long_side), work.full_width, work.full_height, work.detail)


def load_full_image(source: bytes | str | os.PathLike) -> Image.Image:
    """The upright photo at full size (for drawing annotations), with the same safety limits."""
    name = "image data" if isinstance(source, (bytes, bytearray, memoryview)) else os.fspath(source)
    image = _open(source)
    try:
        rgb, _, _ = _decode(image, name, None)  # without its source, always Pillow's image
    finally:
        image.close()
    assert isinstance(rgb, Image.Image)
    return rgb
