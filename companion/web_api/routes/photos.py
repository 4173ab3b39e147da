"""Players' photos, as uploaded (private: only the table that took them should see them)."""

from __future__ import annotations

import io

from flask import Blueprint, send_file

from companion.web_api import context

bp = Blueprint("photos", __name__, url_prefix="/api")


@bp.get("/photos/<int:photo_id>")
def get_photo(photo_id: int):
    photo = context.store().get_photo(photo_id)
    response = send_file(io.BytesIO(photo.data), mimetype=photo.mime, max_age=3600)
    response.cache_control.public = False
    response.cache_control.private = True  # a phone may keep it; no shared cache may
    return response
