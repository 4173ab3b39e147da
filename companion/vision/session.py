"""Opening an ONNX model as an onnxruntime session: the one place that knows onnxruntime."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from companion.vision.settings import CPU_PROVIDERS

if TYPE_CHECKING:  # onnxruntime is imported only when a model is opened
    from onnxruntime import InferenceSession


class ModelsMissing(RuntimeError):
    """The ONNX files are not where they should be."""


def open_session(path: Path, providers: Sequence[str] = CPU_PROVIDERS) -> InferenceSession:
    """The model at `path`, fully optimised, on the first of `providers` that is available."""
    import onnxruntime as ort  # imported here: only reading photos needs it

    if not path.is_file():
        raise ModelsMissing(f"model file {path} is missing (train it: see models/README.md)")
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.inter_op_num_threads = 1
    opts.intra_op_num_threads = min(4, os.cpu_count() or 1)
    # Idle threads wait for the next operator asleep, not spinning: a spinning pool takes
    # the cores from the rest of the read (the JPEG decode, the other model) and from other
    # programs, and on a busy 2-core machine a read then takes half as long again. The
    # results are the same either way; only the waiting differs.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), sess_options=opts, providers=list(providers))


def metadata(session: InferenceSession) -> dict[str, str]:
    """The model's custom metadata (input size, stride, ...), written when it was exported."""
    return dict(session.get_modelmeta().custom_metadata_map)
