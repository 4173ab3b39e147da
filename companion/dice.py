"""The physical dice of Phase 10 Dice: colours, faces, the standard set, and dice notation.

A face is written VALUE+COLOUR: ``7b``, ``10g``, ``Wr`` (W is wild and scores 0).
The colour may be a letter (r/o/g/b) or a full name (``7blue``), in any case.
A token may also name its physical die: ``H3:7b``.

>>> token = parse_token("H3:7r")
>>> token.face, token.die, token.face.points
(Face(value=7, color=<Color.RED: 'red'>), 'H3', 7)
>>> [f.token for f in parse_faces("wr 10G 7blue".split())]
['Wr', '10g', '7b']
>>> parse_token("H1:1b")
Traceback (most recent call last):
  ...
companion.dice.DiceError: bad dice token 'H1:1b': die H1 has no face 1b (its faces: 5r 6o 7b 8g 9o 10g)
>>> len(standard_set().dice), [d.id for d in standard_set().low]
(10, ['L1', 'L2', 'L3', 'L4'])
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Iterable

WILD_TEXT = "W"


class DiceError(ValueError):
    """A dice token or a list of dice that cannot be right."""


class Color(enum.Enum):
    RED = "red"
    ORANGE = "orange"
    GREEN = "green"
    BLUE = "blue"

    @property
    def letter(self) -> str:
        return self.value[0]

    @classmethod
    def parse(cls, text: str) -> "Color":
        key = text.strip().lower()
        for color in cls:
            if key in (color.value, color.letter):
                return color
        raise DiceError(f"unknown colour {text!r}: use r, o, g, b or red, orange, green, blue")


COLORS: tuple[Color, ...] = tuple(Color)


@dataclass(frozen=True, slots=True)
class Face:
    """One printed face: a value 1..10, or None for a wild, in one ink colour."""

    value: int | None
    color: Color

    def __post_init__(self) -> None:
        if self.value is not None and not 1 <= self.value <= 10:
            raise DiceError(f"face value {self.value} is outside 1..10")

    @property
    def is_wild(self) -> bool:
        return self.value is None

    @property
    def points(self) -> int:
        """What the face scores when used: its number, or 0 for a wild."""
        return 0 if self.value is None else self.value

    @property
    def token(self) -> str:
        value = WILD_TEXT if self.value is None else str(self.value)
        return f"{value}{self.color.letter}"

    def __str__(self) -> str:
        return self.token


@dataclass(frozen=True, slots=True)
class Die:
    """A physical die of the set: its id (L1..L4, H1..H6), kind and six faces."""

    id: str
    kind: str  # "low" or "high"
    faces: tuple[Face, ...]

    def has_face(self, face: Face) -> bool:
        return face in self.faces


@dataclass(frozen=True, slots=True)
class DieToken:
    """A parsed token: the face, and the physical die it names if the token said so."""

    face: Face
    die: str | None = None

    @property
    def token(self) -> str:
        return f"{self.die}:{self.face.token}" if self.die else self.face.token


_TOKEN_RE = re.compile(r"^(?:(?P<die>[A-Za-z]\d+):)?(?P<value>10|[1-9]|[Ww])(?P<color>[A-Za-z]+)$")
TOKEN_HELP = (
    "a token is VALUE+COLOUR: value 1..10 or W, colour r/o/g/b or red/orange/green/blue "
    "(e.g. 7b, 10g, Wr, 7blue), optionally prefixed by a die id (e.g. H3:7b)"
)


def parse_face(text: str) -> Face:
    """Parse one face token such as ``7b`` or ``Wred``. A die prefix is not allowed here."""
    parsed = parse_token(text)
    if parsed.die is not None:
        raise DiceError(f"bad dice token {text!r}: a die id is not allowed here")
    return parsed.face


def parse_token(text: str, dice_set: "DiceSet | None" = None) -> DieToken:
    """Parse ``7b``, ``Wred`` or ``H3:7b``; a named die must carry the face."""
    match = _TOKEN_RE.match(str(text).strip())
    if match is None:
        raise DiceError(f"bad dice token {text!r}: {TOKEN_HELP}")
    raw_value = match["value"]
    value = None if raw_value in "Ww" else int(raw_value)
    try:
        color = Color.parse(match["color"])
    except DiceError:
        raise DiceError(f"bad dice token {text!r}: {TOKEN_HELP}") from None
    face = Face(value, color)
    die_id = match["die"].upper() if match["die"] else None
    if die_id is not None:
        try:
            die = (dice_set or standard_set()).die(die_id)
        except DiceError as exc:
            raise DiceError(f"bad dice token {text!r}: {exc}") from None
        if not die.has_face(face):
            faces = " ".join(f.token for f in die.faces)
            raise DiceError(f"bad dice token {text!r}: die {die_id} has no face {face.token} (its faces: {faces})")
    return DieToken(face, die_id)


def parse_tokens(tokens: Iterable[str], dice_set: "DiceSet | None" = None) -> list[DieToken]:
    """Parse a roll of 1 to MAX_DICE tokens; a die may be named at most once."""
    parsed = [parse_token(t, dice_set) for t in tokens]
    if not 1 <= len(parsed) <= MAX_DICE:
        raise DiceError(f"a roll has 1 to {MAX_DICE} dice, got {len(parsed)}")
    named = [p.die for p in parsed if p.die]
    repeated = sorted({d for d in named if named.count(d) > 1})
    if repeated:
        raise DiceError(f"die {repeated[0]} is named more than once")
    return parsed


def parse_faces(tokens: Iterable[str]) -> list[Face]:
    """Parse a roll of 1 to MAX_DICE tokens and keep only the faces."""
    return [p.face for p in parse_tokens(tokens)]


@dataclass(frozen=True, slots=True)
class DiceSet:
    """A set of physical dice (the standard set has 4 low and 6 high)."""

    name: str
    dice: tuple[Die, ...]

    def die(self, die_id: str) -> Die:
        for die in self.dice:
            if die.id == die_id.upper():
                return die
        known = ", ".join(d.id for d in self.dice)
        raise DiceError(f"unknown die {die_id!r}: the set has {known}")

    @property
    def low(self) -> tuple[Die, ...]:
        return tuple(d for d in self.dice if d.kind == "low")

    @property
    def high(self) -> tuple[Die, ...]:
        return tuple(d for d in self.dice if d.kind == "high")

    def dice_with(self, face: Face) -> tuple[Die, ...]:
        """The dice that carry this face (a reading can only come from one of them)."""
        return tuple(d for d in self.dice if d.has_face(face))

    def candidates(self, shown: "Iterable[DieToken | Face]") -> list[list[int]]:
        """For each face shown, the indices (in `dice`) of the dice it may be showing on."""
        ids = [d.id for d in self.dice]
        out = []
        for item in shown:
            token = item if isinstance(item, DieToken) else DieToken(item)
            if token.die is not None:
                die = self.die(token.die)
                if not die.has_face(token.face):
                    raise DiceError(f"die {die.id} has no face {token.face.token}")
                out.append([ids.index(die.id)])
            else:
                found = list(_carriers(self).get(token.face, ()))
                if not found:
                    raise DiceError(f"no die of the set has the face {token.face.token}")
                out.append(found)
        return out

    def check_shown(self, shown: "Iterable[DieToken | Face]") -> None:
        """DiceError unless the set can show these faces at once, each on a die of its own:
        the one check of a roll that every way in (a confirm, the advisor, a log) makes.

        >>> standard_set().check_shown(parse_faces(["Wr"] * 10))
        Traceback (most recent call last):
          ...
        companion.dice.DiceError: these faces cannot all be showing at once on the set's dice: Wr Wr Wr Wr Wr Wr Wr Wr Wr Wr
        """
        shown = list(shown)
        if not _one_die_each(self.candidates(shown)):
            tokens = " ".join((t if isinstance(t, DieToken) else DieToken(t)).token for t in shown)
            raise DiceError(f"these faces cannot all be showing at once on the set's dice: {tokens}")

    def can_show(self, shown: "Iterable[DieToken | Face]") -> bool:
        """Whether the set can show these faces at once, each on a die of its own (check_shown's test)."""
        try:
            return _one_die_each(self.candidates(shown))
        except DiceError:  # a face no die prints, or a named die that lacks it
            return False

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "DiceSet":
        dice = tuple(
            Die(d["id"], d["kind"], tuple(parse_face(t) for t in d["faces"])) for d in data["dice"]
        )
        return cls(data.get("name", "dice"), dice)


_CARRIERS: dict[int, tuple[DiceSet, dict[Face, tuple[int, ...]]]] = {}


def _carriers(dice_set: DiceSet) -> dict[Face, tuple[int, ...]]:
    """Per face, the indices of the set's dice that print it, kept per set object (a roll is
    checked often: the doubts weigh many; hashing a whole set each time costs more)."""
    kept = _CARRIERS.get(id(dice_set))
    if kept is not None and kept[0] is dice_set:
        return kept[1]
    out: dict[Face, tuple[int, ...]] = {}
    for i, die in enumerate(dice_set.dice):
        for face in dict.fromkeys(die.faces):
            out[face] = out.get(face, ()) + (i,)
    if len(_CARRIERS) > 64:
        _CARRIERS.clear()
    _CARRIERS[id(dice_set)] = (dice_set, out)
    return out


def _one_die_each(options: list[list[int]]) -> bool:
    """Whether each item can get a die of its own from its options (a bipartite matching,
    grown one augmenting path at a time)."""
    owner: dict[int, int] = {}  # die -> item

    def place(item: int, seen: set[int]) -> bool:
        for die in options[item]:
            if die not in seen:
                seen.add(die)
                if die not in owner or place(owner[die], seen):
                    owner[die] = item
                    return True
        return False

    return all(place(item, set()) for item in range(len(options)))


@lru_cache(maxsize=1)
def standard_set() -> DiceSet:
    """The standard set of 10 dice, from the package's own data file."""
    text = resources.files("companion").joinpath("data/phase10_dice.json").read_text("utf-8")
    return DiceSet.from_json(json.loads(text))


# A turn rolls every die of the set, so no roll shows more.
MAX_DICE = len(standard_set().dice)
# The numbers the set's faces show (1..10 on the standard set; a wild shows none).
FACE_VALUES: tuple[int, ...] = tuple(
    sorted({f.value for d in standard_set().dice for f in d.faces if f.value is not None})
)
# The values a high die shows (5..10 on the standard set).
HIGH_VALUES: tuple[int, ...] = tuple(
    sorted({f.value for d in standard_set().high for f in d.faces if f.value is not None})
)
