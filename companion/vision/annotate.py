"""Drawing the readings onto a copy of the photo (for `companion read --annotate`)."""

from __future__ import annotations

import os
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from companion.vision.image_io import load_full_image
from companion.vision.reading import Reading

_INK = {"red": (220, 30, 40), "orange": (245, 130, 20), "green": (20, 160, 60), "blue": (30, 80, 220)}


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has one fixed-size default font
        return ImageFont.load_default()


def draw_reading(image: Image.Image, reading: Reading) -> Image.Image:
    """A copy of the upright photo with each die's box and `value+colour [die] confidence`.

    The die id is left out when the face fits several dice; "CHECK" marks an uncertain die.
    """
    out = image.convert("RGB").copy()
    draw = ImageDraw.Draw(out)
    line = max(2, round(max(out.size) / 400))
    font = _font(max(12, round(max(out.size) / 45)))
    for die in reading.dice:
        ink = _INK[die.color.value]
        x0, y0, x1, y1 = die.box
        draw.rectangle((x0, y0, x1, y1), outline=(255, 255, 0) if die.uncertain else ink, width=line)
        parts = [die.face.token, die.die, f"{die.confidence:.2f}", "CHECK" if die.uncertain else None]
        label = " ".join(p for p in parts if p)
        tx, ty = _label_origin(draw, label, font, (x0, y0), out.size, line)
        draw.rectangle(draw.textbbox((tx, ty), label, font=font), fill=(255, 255, 255))
        draw.text((tx, ty), label, fill=ink, font=font)
    return out


def _label_origin(draw: ImageDraw.ImageDraw, label: str, font: ImageFont.FreeTypeFont | ImageFont.ImageFont,
                  corner: tuple[float, float], size: tuple[int, int], line: int) -> tuple[float, float]:
    """Above the box's top-left corner, moved left or down as needed to stay inside the photo."""
    left, top, right, bottom = draw.textbbox((0, 0), label, font=font)
    x = min(corner[0], size[0] - 1 - right)  # the background rectangle includes its far edge
    y = corner[1] - bottom - line
    return max(-left, x), max(-top, y)


def write_annotated(source: str | os.PathLike, reading: Reading, out_path: str | os.PathLike) -> Path:
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    annotated = draw_reading(load_full_image(source), reading)
    fmt = {".png": "PNG", ".webp": "WEBP"}.get(out_path.suffix.lower(), "JPEG")
    annotated.save(out_path, format=fmt, **({"quality": 90} if fmt != "PNG" else {}))
    return out_path
