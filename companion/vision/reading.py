"""What reading a photo answers: the dice found, each with its face, box and confidence."""

from __future__ import annotations

from dataclasses import dataclass, field

from companion.dice import WILD_TEXT, Color, Face


class ImageError(ValueError):
    """The input is not an image we can read: not an image, broken, or too large to decode safely."""


# The HEIF brands of HEVC-coded photos: an iPhone's default "High Efficiency" format. Pillow has
# no HEVC decoder, so such a photo is named in the error instead of being called "not an image".
_HEIC_BRANDS = frozenset({b"heic", b"heix", b"heim", b"heis", b"hevc", b"hevx", b"mif1", b"msf1"})
HEIC_ADVICE = ("an HEIC photo, which is not read: send it as JPEG "
               "(on an iPhone: Settings > Camera > Formats > Most Compatible)")


def is_heic(header: bytes) -> bool:
    """True when the data starts like an HEIC/HEIF photo (an ISO media "ftyp" box, HEIF brand)."""
    return header[4:8] == b"ftyp" and header[8:12] in _HEIC_BRANDS


Box = tuple[float, float, float, float]
Polygon = tuple[tuple[float, float], ...]


@dataclass(frozen=True, slots=True)
class DieReading:
    """One die's top face as read from the photo.

    `box` is (x0, y0, x1, y1) in pixels of the upright full-size photo (EXIF orientation
    applied). `die` is the physical die (e.g. "H3") when the set's layout pins it down,
    None when the face fits several dice about equally. `confidence` is the calibrated
    probability that value and colour are both right; `uncertain` flags dice to check.
    """

    value: int | None  # 1..10, None for a wild (W)
    color: Color
    confidence: float
    box: Box
    die: str | None = None
    uncertain: bool = False
    polygon: Polygon | None = None
    # for an uncertain die: what to ask ("value", "color", or "die": is it a die's top face at all)
    # and the next likeliest face of the set (companion/vision/doubts.py)
    doubt: str | None = None
    runner_up: Face | None = None

    @property
    def face(self) -> Face:
        return Face(self.value, self.color)

    def to_json(self) -> dict:
        return {
            "value": WILD_TEXT if self.value is None else self.value,
            "color": self.color.value,
            "confidence": round(float(self.confidence), 4),
            "box": [round(float(c), 1) for c in self.box],
            "die": self.die,
            "uncertain": bool(self.uncertain),
            "doubt": self.doubt,
            "runner_up": None if self.runner_up is None else {
                "value": WILD_TEXT if self.runner_up.value is None else self.runner_up.value,
                "color": self.runner_up.color.value},
        }


@dataclass(frozen=True, slots=True)
class Reading:
    """All dice read from one photo; width and height are the upright photo's full size."""

    width: int
    height: int
    dice: list[DieReading] = field(default_factory=list)
    ms: float = 0.0

    def to_json(self) -> dict:
        return {
            "width": self.width,
            "height": self.height,
            "dice": [d.to_json() for d in self.dice],
            "ms": round(float(self.ms), 1),
        }
