"""Loading photos: limits, broken files, EXIF orientation, reduced-size JPEG decoding."""

import io
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from companion.vision import image_io
from companion.vision.image_io import (
    MAX_PIXELS,
    NEAR_SCALE,
    WORK_LONG_SIDE,
    _shrink,
    load_detail,
    load_full_image,
    load_work_image,
)
from companion.vision.models import models_present
from companion.vision.reading import DieReading, ImageError, Reading
from companion.dice import Color, Face

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


def _jpeg(img: Image.Image, **kw) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=90, **kw)
    return buf.getvalue()


def _marked(width: int, height: int) -> Image.Image:
    """A grey photo with a red block in its top-left corner (to see where 'up' went)."""
    arr = np.full((height, width, 3), 128, np.uint8)
    arr[: height // 4, : width // 4] = (220, 20, 20)
    return Image.fromarray(arr)


def png_header_only(width: int, height: int) -> bytes:
    """A PNG that claims a size in its header and holds no real pixel data."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 16)) + chunk(b"IEND", b"")


def test_big_jpeg_is_decoded_at_reduced_size_and_keeps_its_full_size():
    data = _jpeg(_marked(4000, 3000))
    work = load_work_image(data)
    assert (work.full_width, work.full_height) == (4000, 3000)
    assert max(work.rgb.shape[:2]) == WORK_LONG_SIDE
    assert work.rgb.shape[1] / work.rgb.shape[0] == pytest.approx(4 / 3, rel=0.01)
    assert work.to_full((0, 0, work.rgb.shape[1], work.rgb.shape[0])) == pytest.approx((0, 0, 4000, 3000))
    assert work.to_work((400, 300, 2000, 1500)) == pytest.approx(
        (400 / 4000 * work.rgb.shape[1], 300 / 3000 * work.rgb.shape[0], 0.5 * work.rgb.shape[1], 0.5 * work.rgb.shape[0]))
    # the red corner is still top-left
    assert work.rgb[10, 10, 0] > 180 and work.rgb[-10, -10, 0] < 150


def test_big_photo_keeps_one_sharper_copy_for_small_dice():
    exif = Image.Exif()
    exif[0x0112] = 6  # a portrait photo stored on its side
    work = load_work_image(_jpeg(_marked(3000, 4000).rotate(90, expand=True), exif=exif.tobytes()))
    # a 12 MP JPEG decodes once, at half scale; that copy stays, upright like the working image
    assert work.detail is not None and work.detail.shape[:2] == (2000, 1500)
    assert work.detail[10, 10, 0] > 180 and work.detail[-10, -10, 0] < 150
    sharper = load_detail(work, 1800)
    assert sharper.rgb.shape[:2] == (1800, 1350) and (sharper.full_width, sharper.full_height) == (3000, 4000)
    assert sharper.to_full((0, 0, 1350, 1800)) == pytest.approx((0, 0, 3000, 4000))
    # asked for nearly as much as it holds (the second search's 1920 px), it is given as it is:
    # no resample, its boxes still mapped to the full photo
    nearly = load_detail(work, 1920)
    assert nearly.rgb is work.detail.array() and nearly.to_full((0, 0, 1500, 2000)) == pytest.approx((0, 0, 3000, 4000))
    # a photo no larger than the working image has nothing sharper to give
    small = load_work_image(_jpeg(_marked(960, 720)))
    assert small.detail is None and load_detail(small, 1800) is small


@pytest.mark.parametrize("size", [(4000, 3000), (4001, 2999), (3024, 4032)])
def test_working_image_is_the_half_scale_decode_shrunk_by_area(size):
    # Halving the decoded photo before it becomes an array (no copy of the full pixels) must
    # give the pixels that shrinking the array by area does, odd sides included: the models
    # were chosen on those
    rng = np.random.default_rng(0)
    small = rng.integers(0, 256, (size[1] // 16, size[0] // 16, 3), dtype=np.uint8)
    data = _jpeg(Image.fromarray(small).resize(size, Image.Resampling.BICUBIC))
    with Image.open(io.BytesIO(data)) as ref:
        ref.draft("RGB", (size[0] // 2, size[1] // 2))
        decoded = np.asarray(ref.convert("RGB"))
    work = load_work_image(data)
    assert decoded.shape[:2] == ((size[1] + 1) // 2, (size[0] + 1) // 2)
    assert np.array_equal(work.rgb, _shrink(decoded, WORK_LONG_SIDE, NEAR_SCALE))
    assert work.detail is not None and np.array_equal(work.detail.array(), decoded)
    assert np.array_equal(load_detail(work, 1500).rgb, _shrink(decoded, 1500))


def test_the_working_images_last_small_shrink_is_bilinear_and_a_large_one_by_area():
    # 12 MP's quarter scale (1000 px) to 960 px is bilinear: as sharp, and four times as fast
    # as by area; a step that drops more of the size stays by area, which does not alias
    rng = np.random.default_rng(1)
    near = rng.integers(0, 256, (750, 1000, 3), dtype=np.uint8)
    far = rng.integers(0, 256, (960, 1280, 3), dtype=np.uint8)
    assert np.array_equal(load_work_image(_png(near)).rgb, cv2.resize(near, (960, 720), interpolation=cv2.INTER_LINEAR))
    assert np.array_equal(load_work_image(_png(far)).rgb, cv2.resize(far, (960, 720), interpolation=cv2.INTER_AREA))


def _png(rgb: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, format="PNG")
    return buf.getvalue()


def test_small_image_is_not_enlarged():
    work = load_work_image(_jpeg(_marked(320, 240)))
    assert work.rgb.shape[:2] == (240, 320)
    assert work.scale_x == 1.0


@pytest.mark.parametrize("orientation", [3, 6, 8])
def test_exif_orientation_is_applied(orientation):
    upright = _marked(400, 300)
    # store the pixels as a camera would, with the tag that turns them back upright
    stored = {3: upright.rotate(180), 6: upright.rotate(90, expand=True), 8: upright.rotate(-90, expand=True)}[
        orientation]
    exif = Image.Exif()
    exif[0x0112] = orientation
    work = load_work_image(_jpeg(stored, exif=exif.tobytes()))
    assert (work.full_width, work.full_height) == (400, 300)
    assert work.rgb.shape[:2] == (300, 400)
    assert work.rgb[10, 10, 0] > 180, "the red block must be back in the top-left corner"
    assert work.rgb[-10, -10, 0] < 150


def test_exif_orientation_with_reduced_decode_maps_to_full_upright_size(tmp_path):
    stored = _marked(3000, 2000).rotate(90, expand=True)  # stored 2000 x 3000, upright 3000 x 2000
    exif = Image.Exif()
    exif[0x0112] = 6
    path = tmp_path / "turned.jpg"
    path.write_bytes(_jpeg(stored, exif=exif.tobytes()))
    work = load_work_image(path)
    assert (work.full_width, work.full_height) == (3000, 2000)
    assert work.rgb.shape[1] > work.rgb.shape[0]
    assert work.scale_x == pytest.approx(work.scale_y, rel=0.01)


@pytest.mark.parametrize("fmt", ["PNG", "WEBP"])
def test_png_and_webp_load(fmt):
    buf = io.BytesIO()
    _marked(200, 100).save(buf, format=fmt)
    work = load_work_image(buf.getvalue())
    assert work.rgb.shape == (100, 200, 3)


def test_rgba_and_greyscale_become_rgb():
    for mode in ("RGBA", "L", "P"):
        buf = io.BytesIO()
        _marked(64, 48).convert(mode).save(buf, format="PNG")
        assert load_work_image(buf.getvalue()).rgb.shape == (48, 64, 3)


def test_huge_png_header_is_refused_before_decoding():
    with pytest.raises(ImageError, match="too large"):
        load_work_image(png_header_only(50000, 50000))
    assert 50000 * 50000 > MAX_PIXELS


def test_text_file_is_not_an_image(tmp_path):
    path = tmp_path / "notes.jpg"
    path.write_text("these are not pixels")
    with pytest.raises(ImageError, match="not an image"):
        load_work_image(path)


# The start of an iPhone HEIC photo: an ISO media "ftyp" box with the heic brand.
HEIC_HEAD = b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + bytes(64)


def test_an_heic_photo_is_named_with_what_to_do_instead(tmp_path):
    path = tmp_path / "IMG_0001.HEIC"
    path.write_bytes(HEIC_HEAD)
    for source in (path, HEIC_HEAD):
        with pytest.raises(ImageError, match="HEIC photo.*JPEG") as caught:
            load_work_image(source)
        assert "not an image (" not in str(caught.value)
    # Other ISO media files (a video, say) stay plain "not an image".
    with pytest.raises(ImageError, match=r"not an image \(JPEG"):
        load_work_image(HEIC_HEAD.replace(b"ftypheic", b"ftypisom"))


def test_truncated_jpeg_is_broken(tmp_path):
    data = _jpeg(_marked(800, 600))
    path = tmp_path / "cut.jpg"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ImageError, match="broken"):
        load_work_image(path)


def test_empty_and_missing_files(tmp_path):
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    with pytest.raises(ImageError):
        load_work_image(empty)
    with pytest.raises(ImageError, match="cannot read"):
        load_work_image(tmp_path / "missing.jpg")
    with pytest.raises(ImageError):
        load_work_image(b"")


def test_full_image_for_annotation_is_upright():
    exif = Image.Exif()
    exif[0x0112] = 6
    img = load_full_image(_jpeg(_marked(400, 300).rotate(90, expand=True), exif=exif.tobytes()))
    assert img.size == (400, 300)


def test_image_error_is_a_value_error():
    assert issubclass(ImageError, ValueError)


def test_reading_json_shape():
    die = DieReading(value=None, color=Color.RED, confidence=0.91234, box=(1.0, 2.0, 30.5, 40.25), die="L1",
                     uncertain=False, polygon=None)
    assert die.face == Face(None, Color.RED)
    assert die.to_json() == {"value": "W", "color": "red", "confidence": 0.9123, "box": [1.0, 2.0, 30.5, 40.2],
                             "die": "L1", "uncertain": False, "doubt": None, "runner_up": None}
    seven = DieReading(7, Color.BLUE, 0.5, (0, 0, 1, 1), None, True, None, doubt="value", runner_up=Face(1, Color.BLUE))
    reading = Reading(100, 80, [seven], 12.34)
    js = reading.to_json()
    assert js["dice"][0]["value"] == 7 and js["dice"][0]["die"] is None and js["ms"] == 12.3
    assert js["dice"][0]["doubt"] == "value" and js["dice"][0]["runner_up"] == {"value": 1, "color": "blue"}
    wild = DieReading(5, Color.RED, 0.5, (0, 0, 1, 1), None, True, None, doubt="value", runner_up=Face(None, Color.RED))
    assert wild.to_json()["runner_up"] == {"value": "W", "color": "red"}


def _pillow_only(monkeypatch):
    """Load as if OpenCV could not decode the JPEG: Pillow's decode, the fallback path."""
    monkeypatch.setattr(image_io, "_jpeg_array", lambda *args, **kwargs: None)


def _same_loading(a, b) -> bool:
    return (np.array_equal(a.rgb, b.rgb) and (a.full_width, a.full_height) == (b.full_width, b.full_height)
            and (a.detail is None) == (b.detail is None)
            and (a.detail is None or np.array_equal(a.detail.array(), b.detail.array())))


@pytest.mark.parametrize(("orientation", "size"), [*((o, (4000, 3000)) for o in range(1, 9)),
                                                    *((o, (2001, 1499)) for o in range(1, 9)), (6, (8000, 6000))])
def test_opencv_decodes_a_baseline_jpeg_as_pillow_does_at_every_orientation(monkeypatch, orientation, size):
    # a baseline colour JPEG goes to OpenCV (its array straight away); the working image and the
    # sharper copy must be the pixels Pillow's decode gives, turned the same way, at the same scale
    rng = np.random.default_rng(orientation)
    small = rng.integers(0, 256, (size[1] // 40, size[0] // 40, 3), dtype=np.uint8)
    stored = Image.fromarray(small).resize(size, Image.Resampling.BICUBIC)
    exif = Image.Exif()
    exif[0x0112] = orientation
    data = _jpeg(stored, exif=exif.tobytes())
    used = []
    real = image_io._jpeg_array
    monkeypatch.setattr(image_io, "_jpeg_array", lambda *a: used.append(real(*a)) or used[-1])
    fast = load_work_image(data)
    assert used and used[0] is not None, "a baseline colour JPEG is decoded by OpenCV"
    _pillow_only(monkeypatch)
    assert _same_loading(fast, load_work_image(data))


@pytest.mark.parametrize("size", [(3841, 2161), (7681, 4321), (12001, 7)])
def test_a_jpeg_the_draft_leaves_at_twice_the_size_asked_loads_as_through_pillow(monkeypatch, size):
    # Pillow's draft cannot halve these sides far enough (an odd side, an extreme shape): Pillow
    # then shrinks the decoded image by blocks, which OpenCV's halving would not match
    rng = np.random.default_rng(size[0])
    small = rng.integers(0, 256, (max(1, size[1] // 40), size[0] // 40, 3), dtype=np.uint8)
    data = _jpeg(Image.fromarray(small).resize(size, Image.Resampling.BICUBIC))
    loaded = load_work_image(data)
    _pillow_only(monkeypatch)
    assert _same_loading(loaded, load_work_image(data))


def test_a_phones_multi_picture_jpeg_is_decoded_at_reduced_scale_like_a_jpeg():
    # an MPO (a JPEG followed by more pictures) of 27 MP: within a baseline JPEG's budget, its
    # first picture decoded at the same DCT scale as the same JPEG's
    rng = np.random.default_rng(5)
    first = Image.fromarray(rng.integers(0, 256, (113, 150, 3), dtype=np.uint8)).resize((6000, 4500), Image.Resampling.BICUBIC)
    buf = io.BytesIO()
    first.save(buf, format="MPO", quality=90, save_all=True, append_images=[first.resize((600, 450))])
    mpo = load_work_image(buf.getvalue())
    with Image.open(io.BytesIO(buf.getvalue())) as opened:
        assert opened.format == "MPO" and opened.size == (6000, 4500)
    assert (mpo.full_width, mpo.full_height) == (6000, 4500) and mpo.rgb.shape == (720, 960, 3)
    assert mpo.detail is not None and max(mpo.detail.array().shape[:2]) <= WORK_LONG_SIDE * 2 * 1.25


def test_jpegs_opencv_is_not_given_still_load_through_pillow(monkeypatch):
    # a progressive JPEG, a greyscale one and a CMYK one are Pillow's to decode
    rgb = np.random.default_rng(3).integers(0, 256, (75, 100, 3), dtype=np.uint8)
    big = Image.fromarray(rgb).resize((2400, 1800), Image.Resampling.BICUBIC)
    for image, kw in ((big, {"progressive": True}), (big.convert("L"), {}), (big.convert("CMYK"), {})):
        data = _jpeg(image, **kw)
        with Image.open(io.BytesIO(data)) as opened:
            assert image_io._jpeg_array(opened, data, opened.size, 1) is None
        work = load_work_image(data)
        assert work.rgb.shape == (720, 960, 3) and (work.full_width, work.full_height) == (2400, 1800)


@pytest.mark.skipif(not models_present(), reason="models/ has no ONNX files yet")
def test_a_photo_read_through_opencv_reads_as_through_pillow(monkeypatch):
    # a committed 12 MP phone photo stored on its side (EXIF 6): the same dice, boxes and confidences either way
    from companion.vision import read_image
    from companion.vision.models import load_models

    models = load_models()
    path = SAMPLES / "s03_busy_exif.jpg"
    used = []
    real = image_io._jpeg_array
    monkeypatch.setattr(image_io, "_jpeg_array", lambda *a: used.append(real(*a)) or used[-1])
    fast = read_image(path, models).dice
    assert used and used[0] is not None, "the photo is decoded by OpenCV"
    _pillow_only(monkeypatch)
    assert fast and read_image(path, models).dice == fast
