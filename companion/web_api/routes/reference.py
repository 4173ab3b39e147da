"""What the page asks once: the API's description, the phases, colours and limits."""

from __future__ import annotations

from flask import Blueprint, jsonify

from companion.rules import PHASES
from companion.web_api import context
from companion.web_api.games import color_names
from companion.web_api.openapi import openapi_document
from companion.web_api.settings import MAX_PHOTO_BYTES

bp = Blueprint("reference", __name__, url_prefix="/api")


@bp.get("/openapi.json")
def openapi():
    return jsonify(openapi_document())


@bp.get("/info")
def info():
    return jsonify({
        "phases": [
            {"number": p.number, "name": p.name, "groups": [{"kind": r.kind, "size": r.size} for r in p.groups]}
            for p in PHASES
        ],
        "colors": color_names(),
        "max_upload_bytes": MAX_PHOTO_BYTES,
        "lan": context.settings().lan,
    })
