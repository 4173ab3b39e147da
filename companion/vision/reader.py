"""The reader: a face crop's value (1..10, W), ink colour and (when it has that head) whether
it is a die's top face at all, voted over quarter turns of the crop.

A joined reader (training/ensemble.py) is shipped as its parts, one file each
(training/reader_parts.py): the reader then gives what the joined file would (the mean of the
parts' log-probabilities, their features joined into the embedding), and its cascade reads every
crop with the first part alone and only the crops it leaves unsure with all parts. A folder with
a single reader file (a joined one without its parts, or one reader) reads through that file."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from companion.vision.session import ModelsMissing, metadata, open_session
from companion.vision.settings import CPU_PROVIDERS, MAX_TURNS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from onnxruntime import InferenceSession

# The vote reads every crop upright, the crops that leaves unsure at the second turn too, and
# only a crop the first FIRST_TURNS leave unsure at the other turns (ReadSettings.reader_turns,
# reader_sure_one, reader_sure).
FIRST_TURNS = 2
EMBEDDING_OUTPUT = "embedding"  # the reader's optional output for learning a table's dice
PART_FILE = "reader_part{}.onnx"  # a joined reader's parts (training/reader_parts.py), beside it
PART_FEATURES = "features"  # a part's pooled features: what the joined file's embedding normalises
PART_SOURCE = "source"  # a part's metadata: the fingerprint of the joined file it was cut from
ENSEMBLE_META = "ensemble"  # a joined file's metadata: the files it joined (training/ensemble.py), one a part


@dataclass(frozen=True, slots=True)
class ReaderLogits:
    """The reader's answer for a batch of crops; `face` is None for a reader without that head."""

    value: np.ndarray  # (n, 11): 1..10, W
    color: np.ndarray  # (n, 4)
    face: np.ndarray | None = None  # (n, 2): not a top face, a top face
    # (n, d), each row of length 1: what the heads read, averaged over the turns read; None for
    # a reader without that output. Learning a table's dice compares these (profile.py).
    embedding: np.ndarray | None = None
    # (n,): did every turn read on its own give the same value and colour? None: not measured
    agree: np.ndarray | None = None

    def face_probability(self) -> np.ndarray | None:
        return None if self.face is None else softmax(self.face)[:, 1]


@dataclass(frozen=True)
class ReaderModel:
    """Classifies a face crop: value (1..10, W) and ink colour, at any rotation."""

    session: InferenceSession | None  # the reader file; None: read through `parts`
    size: int
    has_face_head: bool = False
    has_embedding: bool = False  # the file's `embedding` output (training/reader_embedding.py), or the parts' features
    # names this reader's file (for parts, the joined file they were cut from): embeddings of
    # another reader mean nothing to it
    fingerprint: str = ""
    # the joined file's parts, in its order (load_parts); none: no cascade, every crop gets `session`
    parts: tuple[InferenceSession, ...] = ()

    @classmethod
    def load(cls, path: Path, providers: Sequence[str] = CPU_PROVIDERS) -> ReaderModel:
        """The reader file at `path`, or, beside it, the parts of the joined file it names (read
        through them: the joined file is then not opened)."""
        if not path.is_file():
            return cls.load_parts_alone(path.parent, providers)
        session = open_session(path, providers)
        fingerprint, meta = file_fingerprint(path), metadata(session)
        joined = len(meta.get(ENSEMBLE_META, "").split())  # training.ensemble names the files it joined
        parts = load_parts(path, fingerprint, joined, providers)
        if parts:
            return cls._of_parts(parts, fingerprint)
        outputs = [o.name for o in session.get_outputs()]
        return cls(session, int(meta.get("input_size", 64)), has_face_head="face" in outputs,
                   has_embedding=EMBEDDING_OUTPUT in outputs, fingerprint=fingerprint)

    @classmethod
    def load_parts_alone(cls, folder: Path, providers: Sequence[str] = CPU_PROVIDERS) -> ReaderModel:
        """The parts in `folder` (PART_FILE, from 0 on) of one joined file, its fingerprint theirs."""
        files = list(itertools.takewhile(Path.is_file, (folder / PART_FILE.format(k) for k in itertools.count())))
        if len(files) < 2:
            raise ModelsMissing(f"model file {folder / 'reader.onnx'} is missing, and so are its parts "
                                f"{PART_FILE.format('N')} (train it: see models/README.md)")
        parts = tuple(open_session(f, providers) for f in files)
        sources = {metadata(p).get(PART_SOURCE, "") for p in parts}
        if len(sources) != 1 or "" in sources:
            raise ModelsMissing(f"{folder}: the reader's parts were not cut from one file (training/reader_parts.py)")
        return cls._of_parts(parts, sources.pop())

    @classmethod
    def _of_parts(cls, parts: tuple[InferenceSession, ...], fingerprint: str) -> ReaderModel:
        # every part has the same outputs; its pooled features make the embedding
        outputs = [o.name for o in parts[0].get_outputs()]
        return cls(None, int(metadata(parts[0]).get("input_size", 64)), has_face_head="face" in outputs,
                   has_embedding=PART_FEATURES in outputs, fingerprint=fingerprint, parts=parts)

    @property
    def heads(self) -> list[str]:
        """The outputs the vote averages, in ReaderLogits' order."""
        return ["value", "color"] + (["face"] if self.has_face_head else [])

    def logits(self, crops: np.ndarray, turns: int = MAX_TURNS, sure: float = 1.0, sure_one: float = 1.0,
               cascade: float = 1.0, face_bands: tuple[tuple[float, float], ...] = ()) -> ReaderLogits:
        """crops: (n, size, size, 3) uint8 -> value (n, 11), colour (n, 4) and face (n, 2) logits.

        With turns > 1 each crop is also read turned by 90, 180 (and 270) degrees and the
        log-probabilities are averaged: a cheap vote that steadies hard faces. Most faces are
        plain at once, so the vote goes in stages: every crop is read upright; a crop whose
        every head's most likely class is above `sure_one` stops there, the others are read at
        the second turn too; a crop the first two turns leave at or under `sure` gets the rest.

        With cascade < 1 and the parts at hand, the upright turn is read by the first part
        alone first: a crop whose every head it reads above `cascade` is read by that part
        alone (and the answer has no embedding: the parts' features of such a crop are not
        all known); the others are voted on as above, by every part.

        With `face_bands`, for a read that asks the face head alone: a crop whose face
        probability after stage k of the vote (upright, then two turns) lies outside the band
        face_bands[k] (low, high) stops there too, whatever its other heads read (no band for a
        stage, or a reader without the face head: nothing stops for it).
        """
        if cascade < 1.0 and len(self.parts) > 1 and len(crops):
            return self._cascade(crops, turns, sure, sure_one, cascade, face_bands)
        return self._staged(crops, turns, sure, sure_one, face_bands=face_bands)

    def _cascade(self, crops: np.ndarray, turns: int, sure: float, sure_one: float, cascade: float,
                 face_bands: tuple[tuple[float, float], ...] = ()) -> ReaderLogits:
        first = self._part(0, crops)
        alone = _sure(first[:len(self.heads)], cascade)
        rest = np.flatnonzero(~alone)
        if not rest.size:
            return ReaderLogits(first[0], first[1], first[2] if self.has_face_head else None, None, np.ones(len(crops), bool))
        upright = self._parts_vote(crops[rest], [[h[rest] for h in first]])
        read = self._staged(crops[rest], turns, sure, sure_one, upright, face_bands)
        if not alone.any():
            return read
        heads = [h.copy() for h in first[:len(self.heads)]]
        for head, part in zip(heads, _heads(read)):
            head[rest] = part
        agree = np.ones(len(crops), dtype=bool)
        agree[rest] = read.agree if read.agree is not None else True
        return ReaderLogits(heads[0], heads[1], heads[2] if self.has_face_head else None, None, agree)

    def _part(self, k: int, crops: np.ndarray) -> list[np.ndarray]:
        """Part k's log-probabilities per head and its pooled features of the upright crops."""
        return self._part_batch(k, np.ascontiguousarray(crops.transpose(0, 3, 1, 2), dtype=np.float32))

    def _part_batch(self, k: int, batch: np.ndarray) -> list[np.ndarray]:
        """Part k's log-probabilities per head and its pooled features of `batch` (n, 3, size, size)."""
        *heads, features = self.parts[k].run(self.heads + [PART_FEATURES], {"crops": batch})
        return [log_softmax(h) for h in heads] + [features]

    def _parts_vote(self, crops: np.ndarray, known: list[list[np.ndarray]]) -> tuple[list[np.ndarray], np.ndarray | None, np.ndarray]:
        """What _vote gives for the upright turn, from the parts: the joined file's mean of their
        log-probabilities and its embedding (each part's features of length 1, joined, / sqrt(parts));
        `known`: the first parts' answers, already read."""
        answers = known + [self._part(k, crops) for k in range(len(known), len(self.parts))]
        means, embedding = self._joined(answers)
        seen = np.stack([m.argmax(axis=1)[None] for m in means[:2]])
        return [log_softmax(m) for m in means], embedding, seen

    def _joined(self, answers: list[list[np.ndarray]]) -> tuple[list[np.ndarray], np.ndarray | None]:
        """The joined file's outputs from its parts' `answers` (_part): each head the mean of the
        parts' log-probabilities, and (with that output) the embedding: each part's features
        scaled to length 1, joined, / sqrt(parts)."""
        n = len(self.heads)
        means = [np.mean([a[h] for a in answers], axis=0) for h in range(n)]
        embedding = None
        if self.has_embedding:
            unit = [a[n] / np.maximum(np.linalg.norm(a[n], axis=1, keepdims=True), 1e-12) for a in answers]
            embedding = np.concatenate(unit, axis=1) / np.sqrt(len(answers))
        return means, embedding

    def _staged(self, crops: np.ndarray, turns: int, sure: float, sure_one: float,
                upright: tuple[list[np.ndarray], np.ndarray | None, np.ndarray] | None = None,
                face_bands: tuple[tuple[float, float], ...] = ()) -> ReaderLogits:
        """The staged vote of `logits`; `upright`: the upright turn's vote, already read (_parts_vote)."""
        stages = [(end, level) for end, level in ((1, sure_one), (FIRST_TURNS, sure)) if end < turns]
        bands = face_bands if self.has_face_head else ()
        if upright is None and stages and stages[0][0] == 1 and sure_one >= 1.0 and not bands:
            stages.pop(0)  # no crop can be that sure: the first two turns go in one batch
        stages.append((turns, 1.0))  # the last stage's level is never asked
        heads: list[np.ndarray] = []
        embedding: np.ndarray | None = None
        agree = np.ones(len(crops), dtype=bool)
        first_seen = np.zeros((2, len(crops)), dtype=np.int64)  # what the upright turn read
        active = np.arange(len(crops))
        done = 0
        for stage, (end, level) in enumerate(stages):
            if upright is not None and not done:  # the upright turn (end 1), read before
                more, more_embedding, seen = upright
            else:
                more, more_embedding, seen = self._vote(crops[active], range(done, end))
            if not heads:
                heads, embedding = more, more_embedding
                first_seen = seen[:, 0]
            else:  # the mean of `done` turns and of the `end - done` turns just read
                share = done / end
                for head, rest in zip(heads, more):
                    head[active] = share * head[active] + (1 - share) * rest
                if embedding is not None and more_embedding is not None:
                    embedding[active] = share * embedding[active] + (1 - share) * more_embedding
            agree[active] &= _agree(seen) & (seen[:, 0] == first_seen[:, active]).all(axis=0)
            done = end
            if done == turns:
                break
            stop = _sure([head[active] for head in heads], level)
            if stage < len(bands):
                stop |= _outside(heads[2][active], bands[stage])
            active = active[~stop]
            if not active.size:
                break
        if embedding is not None:
            embedding /= np.maximum(np.linalg.norm(embedding, axis=1, keepdims=True), 1e-12)
        return ReaderLogits(heads[0], heads[1], heads[2] if self.has_face_head else None, embedding, agree)

    def _vote(self, crops: np.ndarray, turns: range) -> tuple[list[np.ndarray], np.ndarray | None, np.ndarray]:
        """Each head's log-probabilities averaged over the crops turned by each of `turns` quarter
        turns, the mean of their embeddings (None without that output), and what each turn read
        on its own: (2, turns, n), the value's and the colour's most likely class."""
        n = len(crops)
        views = [np.rot90(crops, k, axes=(1, 2)) for k in turns]
        batch = np.ascontiguousarray(np.concatenate(views).transpose(0, 3, 1, 2), dtype=np.float32)
        if self.session is None:
            means, joined = self._joined([self._part_batch(k, batch) for k in range(len(self.parts))])
            outputs = means + ([joined] if joined is not None else [])
        else:
            names = self.heads + ([EMBEDDING_OUTPUT] if self.has_embedding else [])
            outputs = self.session.run(names, {"crops": batch})
        heads = [log_softmax(h).reshape(len(turns), n, -1).mean(axis=0) for h in outputs[:len(self.heads)]]
        embedding = outputs[-1].reshape(len(turns), n, -1).mean(axis=0) if self.has_embedding else None
        seen = np.stack([h.reshape(len(turns), n, -1).argmax(axis=2) for h in outputs[:2]])
        return heads, embedding, seen


def _heads(read: ReaderLogits) -> list[np.ndarray]:
    return [read.value, read.color] + ([read.face] if read.face is not None else [])


def load_parts(
    path: Path, fingerprint: str, count: int, providers: Sequence[str] = CPU_PROVIDERS,
) -> tuple[InferenceSession, ...]:
    """The `count` parts beside the joined reader at `path` (PART_FILE, from 0 on), when there
    are two or more, each is there and each was cut from that very file (its metadata's
    PART_SOURCE is `fingerprint`); else none: missing parts, or parts of another reader, would
    read otherwise than it."""
    files = [path.parent / PART_FILE.format(k) for k in range(count)]
    if count < 2 or not all(f.is_file() for f in files):
        return ()
    parts = tuple(open_session(f, providers) for f in files)
    return parts if all(metadata(p).get(PART_SOURCE) == fingerprint for p in parts) else ()


def _agree(seen: np.ndarray) -> np.ndarray:
    """Per crop: did every turn of `seen` (2, turns, n) read the same value and colour?"""
    return (seen == seen[:, :1]).all(axis=(0, 1))


def file_fingerprint(path: Path) -> str:
    """The first 16 hex digits of the file's SHA-256."""
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def _outside(face: np.ndarray, band: tuple[float, float]) -> np.ndarray:
    """Per crop: does the face head's (n, 2) read put its top-face probability outside `band`?"""
    p = softmax(face)[:, 1]
    return (p < band[0]) | (p > band[1])


def _sure(heads: list[np.ndarray], level: float) -> np.ndarray:
    """Per crop: is every head's most likely class more than `level` likely?"""
    sure = np.ones(len(heads[0]), dtype=bool)
    for head in heads:
        sure &= softmax(head).max(axis=1) > level
    return sure


def log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64) / temperature
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)
