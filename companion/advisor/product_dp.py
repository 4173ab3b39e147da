"""Exact keep-or-reroll dynamic programming over groups of interchangeable dice.

A *group* is a set of dice that roll the same outcome distribution (for most phases: the
four low dice roll values {1,2,3,4,W,W}, the six high dice {5..10}; for Phase 8's chance:
the dice with the same colour layout, rolling colours; for Phase 8's per-colour tables:
each die alone, rolling "not c" or one of its faces of colour c). Inside a group only the
multiset of outcomes matters, so a state is one multiset per group, and a table is an
ndarray with one axis per group, indexed by the group's partial multisets (sizes 0..n).

With r rolls left, the value of keeping K is W_r(K) = E[V_{r-1}(K + the rerolled dice)], and
the value of a full state is V_r(S) = best over K inside S of W_r(K). Both are separable per
axis: the expectation adds one die at a time, and the best over sub-multisets of a product
is the best over each factor in turn. Every objective is lexicographic: a primary metric
(what the player maximises) and a secondary one (the tie-break, and the other figure the
advice reports for the same plan), so the two figures always belong to one plan.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

# Two plans whose primary values differ by less than this are tied (sums of multiples of
# 6**-k in a different order differ by ~1e-16; real differences are >= 6**-10 ~ 1.7e-8).
TIE = 1e-11


@dataclass(frozen=True)
class Group:
    """`size` dice rolling outcome o with probability probs[o]; index tables of its multisets."""

    size: int
    probs: tuple[float, ...]
    counts: tuple[tuple[int, ...], ...] = field(init=False, repr=False)
    index: dict[tuple[int, ...], int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        k = len(self.probs)
        # Within a size, descending order: a one-die group's full slot j is outcome j.
        all_counts = [c for s in range(self.size + 1) for c in sorted(_compositions(s, k), reverse=True)]
        object.__setattr__(self, "counts", tuple(all_counts))
        object.__setattr__(self, "index", {c: i for i, c in enumerate(all_counts)})

    @property
    def outcomes(self) -> int:
        return len(self.probs)

    @property
    def length(self) -> int:
        return len(self.counts)

    def sizes(self) -> np.ndarray:
        return np.array([sum(c) for c in self.counts])

    def full(self) -> np.ndarray:
        """Indices of the full multisets, in table order."""
        return np.flatnonzero(self.sizes() == self.size)

    def codes(self, counts: np.ndarray) -> np.ndarray:
        """Table indices of many count vectors at once (rows of `counts`)."""
        radix = (self.size + 1) ** np.arange(self.outcomes)
        return self._dense()[counts @ radix]

    def _dense(self) -> np.ndarray:
        cached = self.__dict__.get("_dense_cache")
        if cached is None:
            radix = (self.size + 1) ** np.arange(self.outcomes)
            cached = np.full((self.size + 1) ** self.outcomes, -1, dtype=np.int64)
            cached[np.array(self.counts) @ radix] = np.arange(self.length)
            object.__setattr__(self, "_dense_cache", cached)
        return cached

    def add_table(self) -> np.ndarray:
        """add[i, o]: the multiset i with one more die showing o (-1 when i is full)."""
        out = np.full((self.length, self.outcomes), -1, dtype=np.int64)
        for i, c in enumerate(self.counts):
            if sum(c) < self.size:
                for o in range(self.outcomes):
                    out[i, o] = self.index[_bump(c, o, +1)]
        return out

    def remove_table(self) -> np.ndarray:
        """remove[i, o]: the multiset i with one die showing o taken out (-1 when none shows o)."""
        out = np.full((self.length, self.outcomes), -1, dtype=np.int64)
        for i, c in enumerate(self.counts):
            for o in range(self.outcomes):
                if c[o] > 0:
                    out[i, o] = self.index[_bump(c, o, -1)]
        return out


def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """All count vectors of `parts` non-negative entries summing to `total`."""
    for cut in itertools.combinations(range(total + parts - 1), parts - 1):
        bounds = (-1,) + cut + (total + parts - 1,)
        yield tuple(bounds[i + 1] - bounds[i] - 1 for i in range(parts))


def _bump(counts: tuple[int, ...], o: int, delta: int) -> tuple[int, ...]:
    return counts[:o] + (counts[o] + delta,) + counts[o + 1 :]


def expand(full_values: np.ndarray, group: Group, axis: int) -> np.ndarray:
    """Expectation along one axis: values on full multisets -> W on every partial multiset."""
    x = np.moveaxis(full_values, axis, 0)
    if group.size == 1:
        return np.moveaxis(_expand_single(x, group), 0, axis)
    out = np.empty((group.length,) + x.shape[1:], dtype=np.float64)
    out[group.full()] = x
    sizes, add = group.sizes(), group.add_table()
    probs = np.asarray(group.probs)
    for s in range(group.size - 1, -1, -1):
        rows = np.flatnonzero(sizes == s)
        acc = np.zeros((len(rows),) + x.shape[1:])
        for o, p in enumerate(probs):
            if p:
                acc += p * out[add[rows, o]]
        out[rows] = acc
    return np.moveaxis(out, 0, axis)


def best_below(primary: np.ndarray, secondary: np.ndarray, group: Group, axis: int) -> None:
    """In place: each entry becomes the lexicographic best over its sub-multisets on this axis."""
    p, s = np.moveaxis(primary, axis, 0), np.moveaxis(secondary, axis, 0)
    if group.size == 1:
        _best_below_single(p, s, group)
        return
    sizes, remove = group.sizes(), group.remove_table()
    for size in range(1, group.size + 1):
        rows = np.flatnonzero(sizes == size)
        for o in range(group.outcomes):
            valid = rows[remove[rows, o] >= 0]
            if len(valid) == 0:
                continue
            child = remove[valid, o]
            cp, cs, ip, is_ = p[child], s[child], p[valid], s[valid]
            better = (cp > ip + TIE) | ((cp >= ip - TIE) & (cs > is_ + TIE))
            p[valid] = np.where(better, cp, ip)
            s[valid] = np.where(better, cs, is_)


def _expand_single(x: np.ndarray, group: Group) -> np.ndarray:
    """expand() for a one-die group, with slices instead of gathers (Phase 8 has ten of them)."""
    out = np.empty((group.length,) + x.shape[1:], dtype=np.float64)
    full = group.full()
    out[full] = x
    outcome = [group.counts[i].index(1) for i in full]
    empty = group.index[(0,) * group.outcomes]
    out[empty] = np.tensordot(np.asarray(group.probs)[outcome], x, axes=1)
    return out


def _best_below_single(p: np.ndarray, s: np.ndarray, group: Group) -> None:
    """best_below() for a one-die group: each shown outcome against rerolling the die."""
    empty = group.index[(0,) * group.outcomes]
    ep, es = p[empty], s[empty]
    for i in group.full():
        ip, is_ = p[i], s[i]
        better = (ep > ip + TIE) | ((ep >= ip - TIE) & (es > is_ + TIE))
        np.copyto(ip, ep, where=better)
        np.copyto(is_, es, where=better)


def restrict_full(table: np.ndarray, groups: tuple[Group, ...]) -> np.ndarray:
    """The entries of a partial-state table at full states (every axis full)."""
    return np.asarray(table[np.ix_(*(g.full() for g in groups))])


def expand_all(full_values: np.ndarray, groups: tuple[Group, ...]) -> np.ndarray:
    out = full_values
    for axis, group in enumerate(groups):
        out = expand(out, group, axis)
    return out


@dataclass
class Solution:
    """For one objective: W_r (keep values on partial states) and V_r (on full states).

    keep[r] = (primary W_r, secondary W_r) for r = 1..rolls; full[r] = (primary V_r, secondary V_r)
    for r = 0..rolls. keep tables are only kept when asked (Phase 8's would be too large).
    """

    full: dict[int, tuple[np.ndarray, np.ndarray]]
    keep: dict[int, tuple[np.ndarray, np.ndarray]]


def solve(
    groups: tuple[Group, ...],
    primary: np.ndarray,
    secondary: np.ndarray,
    rolls: int,
    keep_tables: bool = True,
) -> Solution:
    """Optimal lexicographic play for up to `rolls` rolls, from the final rewards on full states."""
    full = {0: (primary, secondary)}
    keep: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for r in range(1, rolls + 1):
        wp = expand_all(full[r - 1][0], groups)
        ws = expand_all(full[r - 1][1], groups)
        if keep_tables:
            keep[r] = (wp.copy(), ws.copy())
        for axis, group in enumerate(groups):
            best_below(wp, ws, group, axis)
        full[r] = (restrict_full(wp, groups), restrict_full(ws, groups))
    return Solution(full, keep)
