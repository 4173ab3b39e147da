"""The page itself (its scripts and styles are the app's static folder)."""

from __future__ import annotations

from flask import Blueprint, current_app, send_from_directory

bp = Blueprint("page", __name__)


@bp.get("/")
def index():
    return send_from_directory(current_app.config["WEB_DIR"] / "templates", "index.html", max_age=0)
