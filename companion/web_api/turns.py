"""The turn being played, kept on the server so that a reload loses nothing: its photo, the
roll the dice show (the advice depends on the rolls left) and the dice as corrected so far."""

from __future__ import annotations

from typing import Any

from companion.dice import DiceError, parse_face
from companion.store import NotFound, Store
from companion.web_api.bodies import ApiError, TurnBody


def turn_state(body: TurnBody) -> dict[str, Any]:
    """The state to keep, from a page's request (each die's token in the core's spelling)."""
    dice = []
    for die in body.dice:
        try:
            token = parse_face(die.token).token
        except DiceError as exc:
            raise ApiError(400, f"\"dice\" must be the dice as the page shows them: {exc}") from None
        if die.source is not None and body.photo_id is None:
            raise ApiError(400, "\"dice\" name a read die (\"source\") of no photo: send the turn's \"photo_id\"")
        dice.append({"token": token, "source": die.source, "checked": die.checked})
    return {"roll": body.roll, "photo_id": body.photo_id, "dice": dice, "set_aside": body.set_aside}


def turn_view(kept: dict[str, Any], store: Store) -> dict[str, Any] | None:
    """The kept turn as the page restores it: with its photo's reading (None if it is gone)."""
    photo = None
    if kept.get("photo_id") is not None:
        try:
            record = store.get_photo(kept["photo_id"])
        except NotFound:
            return None
        photo = {"id": record.id, "url": f"/api/photos/{record.id}", "reading": record.reading}
        count = len(record.reading.get("dice", []))
        if any(d["source"] is not None and d["source"] >= count for d in kept["dice"]):
            return None
    return {**kept, "photo": photo}
