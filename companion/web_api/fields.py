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
_SURROGATE = re.compile("[\ud800-\udfff]")


class ApiError(Exception):
    """An answer other than 2xx, with the sentence the page shows."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def json_body() -> dict[str, Any]:
    """The request's JSON object: UTF-8 text (RFC 8259), nested at most MAX_JSON_DEPTH deep,
    every string whole characters."""
    raw = request.get_data(cache=True)
    if not request.is_json or not raw:
        raise ApiError(400, "send a JSON object (Content-Type: application/json)")
    try:
        body = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ApiError(400, "send the JSON as UTF-8 text") from None
    except RecursionError:  # the parser's own guard, far below the body's size limit
        raise ApiError(400, f"the JSON is nested too deep; a request needs at most {MAX_JSON_DEPTH} levels") from None
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise ApiError(400, "send a JSON object (Content-Type: application/json, UTF-8)")
    _check_tree(body)
    return body


def _check_tree(body: Any) -> None:
    """Refuse nesting deeper than MAX_JSON_DEPTH, and a string holding half of a UTF-16 pair
    (a lone surrogate: no character, and no text encoding can store it)."""
    stack = [(body, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise ApiError(400, f"the JSON is nested more than {MAX_JSON_DEPTH} levels deep; a request needs at most "
                                f"{MAX_JSON_DEPTH}")
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            for text in (key, item):
                half = _SURROGATE.search(text) if isinstance(text, str) else None
                if half is not None:
                    raise ApiError(400, f"the JSON holds a lone surrogate (U+{ord(half[0]):04X}), half of a "
                                        "UTF-16 pair and no character; send the text as it is typed")
            if isinstance(item, (dict, list)):
                stack.append((item, depth + 1))


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
