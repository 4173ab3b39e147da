"""What the page asks once: the API's description, the phases, colours and limits."""

from __future__ import annotations

from flask import Blueprint, jsonify

from companion.dice import FACE_VALUES, HIGH_VALUES, MAX_DICE
from companion.game import FIVE_PHASE_BONUS_PHASE, MAX_NAME_LENGTH
from companion.rules import PHASES
from companion.rules.phases import ROLLS_PER_TURN
from companion.store import MAX_SET_NAME
from companion.web_api import context
from companion.web_api.games import color_names
from companion.web_api.openapi import openapi_document
from companion.web_api.settings import LIVE, MAX_PHOTO_BYTES

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
        "max_name_length": MAX_NAME_LENGTH,
        "max_set_name_length": MAX_SET_NAME,
        # the scorepad's Five Phase Bonus row follows this phase's row
        "five_phase_bonus_phase": FIVE_PHASE_BONUS_PHASE,
        # the values a high die shows (who starts: each rolls one high die)
        "high_values": list(HIGH_VALUES),
        "face_values": list(FACE_VALUES),  # what the die picker offers, with W
        "dice_count": MAX_DICE,  # a roll shows at most this many, and the advisor needs them all
        "rolls_per_turn": ROLLS_PER_TURN,
        # the page downscales a photo to this long side before upload: the reader never uses more
        "photo_long_side": _photo_long_side(),
        # the live view: each frame scaled to this long side, at most this many a second (idle: fewer)
        "live_frame_long_side": LIVE.frame_long_side,
        "live_max_fps": LIVE.max_fps,
        "live_idle_fps": LIVE.idle_fps,
    })


def _photo_long_side() -> int | None:
    """The most pixels the reader looks at along a photo's long side (None: no reader here)."""
    try:
        from companion.vision.image_io import MAX_DETAIL, WORK_LONG_SIDE
    except ImportError:
        return None
    return round(WORK_LONG_SIDE * MAX_DETAIL)
