"""The turn being played, kept on the server so that a reload loses nothing: its photo, the
roll the dice show (the advice depends on the rolls left) and the dice as corrected so far."""

from __future__ import annotations

from typing import Any

from companion.dice import DiceError, parse_face
from companion.store import NotFound, Store
from companion.web_api.bodies import ApiError, TurnBody
from companion.web_api.games import pointed_box


def turn_state(body: TurnBody, reading: dict[str, Any] | None = None) -> dict[str, Any]:
    """The state to keep, from a page's request (each die's token in the core's spelling).
    `reading`: the turn's photo's, where a die typed in was pointed at on it (the box kept
    with the die, so that a reload keeps the place too)."""
    dice = []
    for die in body.dice:
        try:
            token = parse_face(die.token).token
        except DiceError as exc:
            raise ApiError(400, f"\"dice\" must be the dice as the page shows them: {exc}") from None
        if die.source is not None and body.photo_id is None:
            raise ApiError(400, "\"dice\" name a read die (\"source\") of no photo: send the turn's \"photo_id\"")
        kept: dict[str, Any] = {"token": token, "source": die.source, "checked": die.checked}
        if die.box is not None:
            kept["box"] = _pointed(die.box, die.source, reading)
        dice.append(kept)
    return {"roll": body.roll, "photo_id": body.photo_id, "dice": dice, "set_aside": body.set_aside}


def _pointed(box: list[float], source: int | None, reading: dict[str, Any] | None) -> list[float]:
    """A die's pointed box as kept: a die typed in (no source), inside the turn's photo."""
    if source is not None:
        raise ApiError(400, "\"dice\" give a \"box\" for a read die: only a die typed in is pointed at")
    if reading is None:
        raise ApiError(400, "\"dice\" point at a die (\"box\") on no photo: send the turn's \"photo_id\"")
    try:
        return list(pointed_box(box, reading))
    except DiceError as exc:
        raise ApiError(400, f"\"dice\": {exc}") from None


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
