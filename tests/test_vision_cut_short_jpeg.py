"""A JPEG that declares its size and holds too little image data is a broken file, said so by
the reader, the command line and the server alike (it used to read as a photo with no dice)."""

from __future__ import annotations

import io
import struct
import subprocess
import sys

import pytest
from PIL import Image

from companion.vision.image_io import load_work_image
from companion.vision.reading import ImageError


def jpeg_header_only(width: int, height: int, keep_scan: int = 0) -> bytes:
    """A real JPEG's headers with its frame size changed, then `keep_scan` bytes of its scan and EOI."""
    out = io.BytesIO()
    Image.new("RGB", (64, 48), (180, 90, 40)).save(out, "JPEG")
    data = bytearray(out.getvalue())
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = struct.pack(">HH", height, width)
    sos = data.index(b"\xff\xda")
    start = sos + 2 + struct.unpack(">H", data[sos + 2:sos + 4])[0]
    return bytes(data[:start + keep_scan]) + b"\xff\xd9"


EMPTY = jpeg_header_only(9999, 9999)


def test_a_jpeg_with_no_image_data_is_broken_not_a_photo_of_no_dice():
    with pytest.raises(ImageError, match="broken image .*9999x9999.*cut short"):
        load_work_image(EMPTY)


def test_the_command_line_says_so_and_fails(tmp_path):
    path = tmp_path / "empty.jpg"
    path.write_bytes(EMPTY)
    done = subprocess.run([sys.executable, "-m", "companion", "read", str(path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0 and done.stdout == ""
    assert "cut short" in done.stderr and "libjpeg" not in done.stderr.lower()


def test_the_server_answers_422_and_keeps_nothing(app, client):
    game = client.post("/api/games", json={"players": ["Ann"]}).json
    for path in ("/api/read", f"/api/games/{game['id']}/photos"):
        response = client.post(path, data={"photo": (io.BytesIO(EMPTY), "photo.jpg")},
                               content_type="multipart/form-data")
        assert response.status_code == 422 and "cut short" in response.json["error"], path
    assert client.get(f"/api/games/{game['id']}").json["seq"] == 0
    with app.extensions["companion"].store._read() as conn:
        assert conn.execute("SELECT COUNT(*) FROM photos").fetchone()[0] == 0


def test_a_flat_grey_jpeg_with_the_shortest_codes_is_still_a_photo():
    # every block coded in the fewest bits a JPEG allows: exactly at the bound, and whole
    out = io.BytesIO()
    Image.new("L", (4000, 3000), 128).save(out, "JPEG", optimize=True)
    work = load_work_image(out.getvalue())
    assert (work.full_width, work.full_height) == (4000, 3000)
