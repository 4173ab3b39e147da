"""Fonts for the numerals, and the glyph masks drawn with them.

Three sources, so the generator works on any machine: TrueType/OpenType fonts found under
the system font folders (more after `apt-get install fonts-...`), OpenCV's built-in Hershey
stroke fonts (always there), and Pillow's built-in default font (always there in Pillow >= 10.1).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts")
# Noto ships hundreds of script-specific fonts; only its Latin families carry our digits.
_NOTO_LATIN = ("NotoSans-", "NotoSerif-", "NotoSansMono-", "NotoSansDisplay-", "NotoSerifDisplay-")
# Hairline weights vanish at die size; symbol fonts have no digits worth learning.
_SKIP_WORDS = ("ubuntu-title", "thin", "hairline", "extralight", "math", "music", "symbol", "emoji", "awesome", "dingbat", "braille", "fontawesome", "standardsymbols", "d050000l")
_HERSHEY = {
    "Hershey-Simplex": cv2.FONT_HERSHEY_SIMPLEX,
    "Hershey-Duplex": cv2.FONT_HERSHEY_DUPLEX,
    "Hershey-Complex": cv2.FONT_HERSHEY_COMPLEX,
    "Hershey-Triplex": cv2.FONT_HERSHEY_TRIPLEX,
    "Hershey-Plain": cv2.FONT_HERSHEY_PLAIN,
    "Hershey-ScriptSimplex": cv2.FONT_HERSHEY_SCRIPT_SIMPLEX,
    "Hershey-ScriptComplex": cv2.FONT_HERSHEY_SCRIPT_COMPLEX,
    "Hershey-ComplexItalic": cv2.FONT_HERSHEY_COMPLEX | cv2.FONT_ITALIC,
}
PIL_DEFAULT = "Pillow-Default"
GLYPH_PX = 160  # glyphs are drawn once at this height, then resized per face


@dataclass(frozen=True)
class FontSpec:
    name: str
    kind: str  # "ttf" | "hershey" | "pil"
    path: str = ""

    @property
    def family(self) -> str:
        if self.kind != "ttf":
            return self.name
        return re.sub(r"(Bold|Oblique|Italic)+$", "", re.split(r"[-_]", self.name)[0]) or self.name

    def is_validation_only(self) -> bool:
        """About one font family in five is kept for the validation split only."""
        return zlib.crc32(self.family.encode()) % 5 == 0


def _wanted(path: Path) -> bool:
    name = path.stem
    if any(w in name.lower() for w in _SKIP_WORDS):
        return False
    if name.startswith("Noto") and not name.startswith(_NOTO_LATIN):
        return False
    return True


def _draws_digits(path: Path) -> bool:
    """True when the font has distinct glyphs for 6, 9 and W (no missing-glyph boxes)."""
    try:
        font = ImageFont.truetype(str(path), 48)
        masks = [bytes(font.getmask(ch)) for ch in ("6", "9", "W", "\ue000")]
    except (OSError, ValueError):
        return False
    return len(set(masks)) == 4 and all(any(m) for m in masks[:3])


def usable_font(path: Path) -> FontSpec | None:
    """The font file as a numeral font, or None when it is skipped or draws no distinct 6, 9 and W."""
    if not _wanted(path) or not _draws_digits(path):
        return None
    return FontSpec(path.stem, "ttf", str(path))


@lru_cache(maxsize=1)
def available_fonts() -> tuple[FontSpec, ...]:
    """Every usable font on this machine, sorted by name so seeds mean the same everywhere."""
    found: dict[str, FontSpec] = {}
    for folder in FONT_DIRS:
        root = Path(folder)
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.suffix.lower() in (".ttf", ".otf") and path.stem not in found:
                spec = usable_font(path)
                if spec is not None:
                    found[path.stem] = spec
    specs = sorted(found.values(), key=lambda f: f.name)
    specs += [FontSpec(name, "hershey") for name in _HERSHEY]
    specs.append(FontSpec(PIL_DEFAULT, "pil"))
    return tuple(specs)


@lru_cache(maxsize=8)
def fonts_for_split(split: str) -> tuple[FontSpec, ...]:
    fonts = available_fonts()
    if split == "val":
        held_out = tuple(f for f in fonts if f.is_validation_only())
        return held_out or fonts
    trained = tuple(f for f in fonts if not f.is_validation_only())
    return trained or fonts


@lru_cache(maxsize=8)
def families(fonts: tuple[FontSpec, ...]) -> dict[str, tuple[FontSpec, ...]]:
    """Fonts grouped by family, so a family with 18 weights is not picked 18 times as often."""
    grouped: dict[str, list[FontSpec]] = {}
    for font in fonts:
        grouped.setdefault(font.family, []).append(font)
    return {name: tuple(members) for name, members in sorted(grouped.items())}


def _crop(mask: np.ndarray) -> np.ndarray:
    x, y, w, h = cv2.boundingRect((mask > 8).astype(np.uint8))
    if w == 0 or h == 0:
        return mask[:1, :1].copy()
    return mask[y : y + h, x : x + w].copy()


def _ttf_mask(font: FontSpec, text: str, bold: int) -> np.ndarray:
    if font.kind == "pil":
        pil_font = ImageFont.load_default(size=GLYPH_PX)
    else:
        pil_font = ImageFont.truetype(font.path, GLYPH_PX)
    canvas = Image.new("L", (GLYPH_PX * 3, GLYPH_PX * 2), 0)
    draw = ImageDraw.Draw(canvas)
    stroke = bold * GLYPH_PX // 40
    draw.text((GLYPH_PX // 3, GLYPH_PX // 3), text, font=pil_font, fill=255, stroke_width=stroke, stroke_fill=255)
    return np.asarray(canvas)


def _hershey_mask(font: FontSpec, text: str, bold: int) -> np.ndarray:
    face = _HERSHEY[font.name]
    scale = GLYPH_PX / 22.0
    thickness = max(2, int(GLYPH_PX / 14) + bold * GLYPH_PX // 30)
    canvas = np.zeros((GLYPH_PX * 2, GLYPH_PX * 4), np.uint8)
    cv2.putText(canvas, text, (GLYPH_PX // 4, int(GLYPH_PX * 1.4)), face, scale / 1.5, 255, thickness, cv2.LINE_AA)
    return canvas


@lru_cache(maxsize=16384)
def glyph_mask(font: FontSpec, text: str, bold: int = 0) -> np.ndarray:
    """The text's ink as an 8-bit mask cropped to its bounding box (read-only, cached)."""
    raw = _hershey_mask(font, text, bold) if font.kind == "hershey" else _ttf_mask(font, text, bold)
    mask = _crop(raw)
    mask.setflags(write=False)
    return mask
