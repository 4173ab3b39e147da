"""Reading a request: the JSON body and its typed fields, each refused with a sentence."""

from __future__ import annotations

import json
import re
from typing import Any, Callable, TypeVar

from flask import request

from companion.dice import DiceError, DieToken, Face, parse_faces, parse_token
from companion.rules import PHASES
from companion.web_api.settings import MAX_JSON_DEPTH, MAX_LIST_ITEMS

T = TypeVar("T")
_MISSING = object()
_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))


class ApiError(Exception):
    """An answer other than 2xx, with the sentence the page shows."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def json_body() -> dict[str, Any]:
    """The request's JSON object; its nesting is checked before it is parsed."""
    raw = request.get_data(cache=True)
    if not request.is_json or not raw:
        raise ApiError(400, "send a JSON object (Content-Type: application/json)")
    depth = json_depth(raw)
    if depth > MAX_JSON_DEPTH:
        raise ApiError(400, f"the JSON is nested {depth} levels deep; a request needs at most {MAX_JSON_DEPTH}")
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        body = None
    if not isinstance(body, dict):
        raise ApiError(400, "send a JSON object (Content-Type: application/json)")
    return body


def json_depth(raw: bytes) -> int:
    """How deep the arrays and objects of a JSON text nest (strings skipped), without parsing it."""
    brackets = _STRINGS.sub(b"", raw).translate(None, _NOT_BRACKETS)
    depth = deepest = 0
    for char in brackets:
        depth += 1 if char in b"[{" else -1
        deepest = max(deepest, depth)
    return deepest


def field(body: dict[str, Any], name: str, kind: type[T], what: str, *, optional: bool = False,
          items: type | tuple[type, ...] | None = None, valid: Callable[[T], bool] | None = None) -> T:
    """`body[name]` as a `kind` (an int is never a bool), else a 400 saying it must be `what`.

    `optional`: absent or null gives None. `items`: the type of a list's items; a list
    longer than MAX_LIST_ITEMS is refused before anything looks at its items."""
    value = _whole(body.get(name))
    if value is None and optional:
        return None  # type: ignore[return-value]
    ok = _is(value, kind)
    if ok and isinstance(value, list):
        if len(value) > MAX_LIST_ITEMS:
            raise ApiError(400, f"\"{name}\" has {len(value)} items; a request's lists hold at most {MAX_LIST_ITEMS}")
        value = [_whole(item) for item in value]
        ok = items is None or all(_is(item, items) for item in value)
    if not ok or (valid is not None and not valid(value)):
        raise ApiError(400, f"\"{name}\" must be {what}")
    return value


def _whole(value: Any) -> Any:
    """JSON has one kind of number: 7.0 is the integer 7 (as JSON Schema says), 7.5 is not."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    return value


def _is(value: Any, kind: type | tuple[type, ...]) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        return False
    return isinstance(value, kinds)


def sentence(text: str) -> str:
    """An error of the core ("not Ann's turn") as the sentence the page shows."""
    return text[:1].upper() + text[1:] + "."


def phase(body: dict[str, Any]) -> int:
    return field(body, "phase", int, f"a number 1..{len(PHASES)}", valid=lambda p: 1 <= p <= len(PHASES))


_TOKENS = "a list of tokens such as \"7b\", \"10g\", \"Wr\""


def faces(body: dict[str, Any]) -> list[Face]:
    """The "dice" of a roll (1 to MAX_DICE tokens: the dice module says)."""
    try:
        return parse_faces(field(body, "dice", list, _TOKENS, items=str))
    except DiceError as exc:
        raise ApiError(400, str(exc)) from None


def tokens(body: dict[str, Any]) -> list[DieToken]:
    """The "dice" token by token, however many: the caller (the advisor) says how many it needs."""
    try:
        return [parse_token(t) for t in field(body, "dice", list, _TOKENS, items=str)]
    except DiceError as exc:
        raise ApiError(400, str(exc)) from None
